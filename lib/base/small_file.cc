// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/small_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace dist_train {

ssize_t ReadSmallFile(const char* path, char* buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  while (len + 1 < cap) {
    ssize_t n = read(fd, buf + len, cap - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  close(fd);
  buf[len] = 0;
  return static_cast<ssize_t>(len);
}

}  // namespace dist_train
