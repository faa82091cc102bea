// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/input_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace dist_train {
namespace {

// Appends at most `limit` bytes of `fd` to `out`; false on a read error.
bool ReadUpTo(int fd, size_t limit, std::string* out) {
  char buf[65536];
  while (out->size() < limit) {
    size_t want = std::min(sizeof(buf), limit - out->size());
    ssize_t n = read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

Status ReadInputFile(const std::string& path, size_t max_bytes,
                     std::string* text) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound(path + ": cannot read the file");
  std::string data;
  bool ok = ReadUpTo(fd, max_bytes + 1, &data);
  close(fd);
  if (!ok) return Status::NotFound(path + ": cannot read the file");
  if (data.size() > max_bytes) {
    return Status::InvalidArgument(path + ": larger than the " +
                                   std::to_string(max_bytes) +
                                   "-byte limit for a gen-sbatch input");
  }
  *text = std::move(data);
  return Status::OK();
}

}  // namespace dist_train
