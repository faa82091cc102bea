// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/checkpoint_files.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "base/parse.h"

namespace dist_train {
namespace {

// "<step>\n": 21 bytes at most; more is damage, not something to read.
constexpr off_t kMaxLatestBytes = 32;

std::string Octal(mode_t mode) {
  char buf[8];
  snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string NotOurs(const std::string& path, uid_t owner) {
  return path + ": owned by uid " + std::to_string(owner) +
         ", not by this user (uid " + std::to_string(geteuid()) + ")";
}

// Ours, and not writable by every user unless sticky (then others may add
// entries but never touch ours). Group-writable is allowed: `mkdir -p`
// under umask 002 makes that, and the group is trusted like the owner;
// every entry we read is checked on its own anyway.
Status CheckOwnDirectory(const struct stat& st, const std::string& path) {
  if (!S_ISDIR(st.st_mode))
    return Status::InvalidArgument(path + ": not a directory");
  if (st.st_uid != geteuid())
    return Status::PermissionDenied(NotOurs(path, st.st_uid) +
                                    "; refusing it for checkpoints");
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0)
    return Status::PermissionDenied(
        path + ": writable by other users (mode " + Octal(st.st_mode) +
        ", no sticky bit); refusing it for checkpoints");
  return Status::OK();
}

// Opens `name` under `at` (AT_FDCWD: a path) without following a symlink
// in its last component; O_NONBLOCK so that a FIFO planted there cannot
// stall the open. `path` names it in errors.
Status OpenNoFollow(int at, const std::string& name, const std::string& path,
                    Fd* fd, struct stat* st) {
  fd->Reset(
      openat(at, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd->get() < 0 && errno == ELOOP)
    return Status::PermissionDenied(path +
                                    ": is a symbolic link; not following it");
  if (fd->get() < 0 && errno == ENOENT)
    return Status::NotFound(path + ": does not exist");
  if (fd->get() < 0) return Errno("open " + path);
  if (fstat(fd->get(), st) != 0) return Errno("stat " + path);
  return Status::OK();
}

// "/ckpt/" -> "/ckpt": a trailing slash would make open() follow a symlink.
std::string WithoutTrailingSlash(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string StepName(uint64_t step) { return "step-" + std::to_string(step); }

// 16 hex digits nobody can predict: the temp file's name.
std::string RandomHex() {
  uint64_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != static_cast<ssize_t>(sizeof(r)))
    r = static_cast<uint64_t>(time(nullptr)) ^ (uint64_t{1} << 63);
  char buf[20];
  snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(r));
  return buf;
}

Status WriteAll(int fd, const std::string& bytes, const std::string& path) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("write " + path);
    off += static_cast<size_t>(n);
  }
  return Status::OK();
}

// The step in dir/LATEST ("<step>\n"), read from a file of at most
// kMaxLatestBytes.
Status ReadLatest(int dir_fd, const std::string& dir, uint64_t* step) {
  const std::string path = dir + "/LATEST";
  Fd fd;
  struct stat st {};
  Status s = OpenOwnFile(dir_fd, "LATEST", path, &fd, &st);
  if (s.code() == Status::Code::kNotFound)
    return Status::NotFound(dir + ": no complete checkpoint");
  DT_RETURN_IF_ERROR(s);
  if (st.st_size > kMaxLatestBytes)
    return Status::InvalidArgument(path + " is damaged (over " +
                                   std::to_string(kMaxLatestBytes) + " bytes)");
  std::string text;
  DT_RETURN_IF_ERROR(
      ReadExactly(fd.get(), static_cast<size_t>(st.st_size), 0, path, &text));
  if (text.empty() || text.back() != '\n' ||
      !ParseUint(text.substr(0, text.size() - 1), 0, UINT64_MAX, step))
    return Status::InvalidArgument(path + " is damaged");
  return Status::OK();
}

}  // namespace

void Fd::Reset(int fd) {
  int saved = errno;
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
  errno = saved;
}

int Fd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

Status Errno(const std::string& what) {
  return Status::IOError(what + ": " + strerror(errno));
}

Status OpenOwnDirectory(int at, const std::string& name,
                        const std::string& path, Fd* fd) {
  struct stat st {};
  DT_RETURN_IF_ERROR(OpenNoFollow(at, name, path, fd, &st));
  return CheckOwnDirectory(st, path);
}

Status MakeOwnDirectory(int at, const std::string& name,
                        const std::string& path, Fd* fd) {
  if (mkdirat(at, name.c_str(), 0700) != 0 && errno != EEXIST)
    return Errno("mkdir " + path);
  return OpenOwnDirectory(at, name, path, fd);
}

Status OpenOwnFile(int at, const std::string& name, const std::string& path,
                   Fd* fd, struct stat* st) {
  DT_RETURN_IF_ERROR(OpenNoFollow(at, name, path, fd, st));
  if (!S_ISREG(st->st_mode))
    return Status::InvalidArgument(path + ": not a regular file");
  if (st->st_uid != geteuid())
    return Status::PermissionDenied(NotOurs(path, st->st_uid) +
                                    "; not reading it");
  return Status::OK();
}

Status ReadOwnFile(int at, const std::string& name, const std::string& path,
                   size_t max_bytes, std::string* text) {
  Fd fd;
  struct stat st {};
  DT_RETURN_IF_ERROR(OpenOwnFile(at, name, path, &fd, &st));
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    std::string limit = max_bytes % (1u << 20) == 0
                            ? std::to_string(max_bytes >> 20) + " MiB"
                            : std::to_string(max_bytes) + " bytes";
    return Status::InvalidArgument(path + " is larger than " + limit);
  }
  return ReadExactly(fd.get(), st.st_size, 0, path, text);
}

Status ReadExactly(int fd, size_t size, off_t offset, const std::string& path,
                   std::string* out) {
  out->resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, &(*out)[done], size - done,
                      offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read " + path);
    if (n == 0) return Status::IOError(path + ": shrank while being read");
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

std::string TempName(const std::string& name) {
  return "." + name + ".tmp." + RandomHex();
}

Status WriteAtomically(int dir_fd, const std::string& dir,
                       const std::string& name, const std::string& bytes,
                       bool durable) {
  const std::string tmp = TempName(name);
  const std::string tmp_path = dir + "/" + tmp;
  Fd fd;
  fd.Reset(openat(dir_fd, tmp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return Errno("create " + tmp_path);
  Status s = WriteAll(fd.get(), bytes, tmp_path);
  if (s.ok() && durable && fsync(fd.get()) != 0) s = Errno("fsync " + tmp_path);
  if (s.ok() && renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0)
    s = Errno("rename " + tmp_path);
  if (!s.ok()) {
    unlinkat(dir_fd, tmp.c_str(), 0);
    return s;
  }
  return !durable || fsync(dir_fd) == 0 ? Status::OK() : Errno("fsync " + dir);
}

Status MakeStepDir(const std::string& dir, uint64_t step, StepDir* out) {
  out->top = WithoutTrailingSlash(dir);
  out->path = out->top + "/" + StepName(step);
  DT_RETURN_IF_ERROR(
      MakeOwnDirectory(AT_FDCWD, out->top, out->top, &out->top_fd));
  return MakeOwnDirectory(out->top_fd.get(), StepName(step), out->path,
                          &out->fd);
}

Status OpenStepDir(const std::string& dir, uint64_t step, StepDir* out) {
  out->top = WithoutTrailingSlash(dir);
  out->path = out->top + "/" + StepName(step);
  DT_RETURN_IF_ERROR(
      OpenOwnDirectory(AT_FDCWD, out->top, out->top, &out->top_fd));
  return OpenOwnDirectory(out->top_fd.get(), StepName(step), out->path,
                          &out->fd);
}

Status OpenLatestStep(const std::string& dir, uint64_t* step, StepDir* out) {
  out->top = WithoutTrailingSlash(dir);
  Status s = OpenOwnDirectory(AT_FDCWD, out->top, out->top, &out->top_fd);
  if (s.code() == Status::Code::kNotFound)
    return Status::NotFound(out->top + ": no complete checkpoint");
  DT_RETURN_IF_ERROR(s);
  DT_RETURN_IF_ERROR(ReadLatest(out->top_fd.get(), out->top, step));
  out->path = out->top + "/" + StepName(*step);
  return OpenOwnDirectory(out->top_fd.get(), StepName(*step), out->path,
                          &out->fd);
}

Status WriteLatest(int top_fd, const std::string& top, uint64_t step) {
  return WriteAtomically(top_fd, top, "LATEST", std::to_string(step) + "\n");
}

Status AgreeAndMark(Communicator* comm, const Status& mine, const StepDir& dir,
                    uint64_t step) {
  // Everyone learns whether every rank succeeded before the step is marked
  // (a rank refusing the directory too, so none waits for it).
  int32_t ok = mine.ok() ? 1 : 0, all = 0;
  DT_RETURN_IF_ERROR(
      comm->AllReduce(&ok, &all, 1, DataType::kInt32, ReduceOp::kMin));
  if (!mine.ok()) return mine;
  if (!all)
    return Status::Unavailable("checkpoint of step " + std::to_string(step) +
                               " failed on another rank; not marked complete");
  if (comm->rank() == 0)
    DT_RETURN_IF_ERROR(WriteLatest(dir.top_fd.get(), dir.top, step));
  return comm->Barrier();
}

}  // namespace dist_train
