// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/root_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace dist_train {
namespace {

struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

// The whole of the regular file open on `fd` (checked by fstat as `st`).
Status ReadAll(const std::string& path, int fd, const struct stat& st,
               std::string* out) {
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + ": not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxTopologyFile) {
    return Status::InvalidArgument(
        path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
        std::to_string(kMaxTopologyFile) + "-byte cap for topology files");
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(path, "cannot read");
    if (n == 0) break;  // shrank meanwhile: parse what is there
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  *out = std::move(data);
  return Status::OK();
}

Status WriteAll(const std::string& path, int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return Status::IOError(path + ": cannot write: " + strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return Status::IOError(path + ": " + strerror(errno));
  return Status::OK();
}

// Why `st` (of `path`, `kind`) could have been written by someone other
// than root, or "" when it could not.
std::string NotRootOnly(const struct stat& st, const char* kind) {
  if (st.st_uid != 0) {
    return std::string(kind) + " is owned by uid " + std::to_string(st.st_uid) +
           ", not root";
  }
  bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_dir) {
    return std::string(kind) + " is writable by group or others";
  }
  if (!S_ISDIR(st.st_mode) && st.st_nlink != 1) {
    return std::string(kind) + " has " + std::to_string(st.st_nlink) +
           " hard links";
  }
  return "";
}

}  // namespace

Status ErrnoError(const std::string& path, const char* doing) {
  return Status::InvalidArgument(path + ": " + doing + ": " + strerror(errno));
}

Status ReadFileCapped(const std::string& path, std::string* out) {
  FdCloser f{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return ErrnoError(path, "cannot open");
  struct stat st;
  if (fstat(f.fd, &st) != 0) return ErrnoError(path, "cannot stat");
  return ReadAll(path, f.fd, st, out);
}

Status ReadRootOnlyFile(const std::string& path, std::string* out,
                        struct stat* st_out) {
  size_t slash = path.rfind('/');
  std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  if (path.empty() || path[0] != '/' || slash + 1 == path.size()) {
    return Status::InvalidArgument(path + ": expected an absolute file path");
  }
  FdCloser d{open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd < 0) return ErrnoError(path, "cannot open its directory");
  struct stat st;
  if (fstat(d.fd, &st) != 0)
    return ErrnoError(path, "cannot stat its directory");
  std::string why = NotRootOnly(st, "its directory");
  FdCloser f{why.empty() ? openat(d.fd, path.c_str() + slash + 1,
                                  O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                         : -1};
  if (why.empty() && f.fd < 0) return ErrnoError(path, "cannot open");
  if (why.empty() && fstat(f.fd, &st) != 0)
    return ErrnoError(path, "cannot stat");
  if (why.empty()) why = NotRootOnly(st, "the file");
  if (!why.empty()) {
    return Status::PermissionDenied(path + ": " + why +
                                    "; not loaded inside slurmstepd");
  }
  if (st_out) *st_out = st;
  return ReadAll(path, f.fd, st, out);
}

Status WriteFileAtomically(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  unlink(tmp.c_str());  // our own leftover from a crash, or a trap
  FdCloser f{open(tmp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (f.fd < 0)
    return Status::IOError(tmp + ": cannot write: " + strerror(errno));
  Status s = WriteAll(tmp, f.fd, data);
  if (s.ok() && fchmod(f.fd, 0644) != 0) {
    s = Status::IOError(tmp + ": " + strerror(errno));  // umask may be 077
  }
  if (s.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    s = Status::IOError(path + ": " + strerror(errno));
  }
  if (!s.ok()) unlink(tmp.c_str());
  return s;
}

}  // namespace dist_train
