// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "runtime/crypto.h"

namespace dist_train {
namespace {
constexpr size_t kLine = 64;

size_t LineBytes(int ranks) { return kLine * (2 * ranks + 1); }
}  // namespace

size_t ShmSegment::Bytes(int ranks, size_t chunk) {
  return LineBytes(ranks) + 2 * chunk * (ranks + 1);
}

ShmSegment::~ShmSegment() { Reset(); }

void ShmSegment::Reset() {
  Unlink();  // a creator that never got to unlink (setup failed) does now
  if (base_ != nullptr) munmap(base_, bytes_);
  base_ = nullptr;
}

Status ShmSegment::Map(int fd, int ranks, size_t chunk) {
  bytes_ = Bytes(ranks, chunk);
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return Status::IOError(std::string("mmap shared memory: ") +
                           strerror(errno));
  base_ = static_cast<char*>(p);
  ranks_ = ranks, chunk_ = chunk;
  return Status::OK();
}

std::string ShmSegment::RandomName() {
  unsigned char r[8] = {0};
  // Without random bytes, the time and pid: a name someone could guess is
  // still never opened by another (Create uses O_EXCL, Open checks owner
  // and mode), only squatted, which falls back to TCP.
  if (!RandomBytes(r, sizeof(r))) {
    uint64_t v = static_cast<uint64_t>(time(nullptr)) << 20 ^ getpid();
    std::memcpy(r, &v, sizeof(r));
  }
  char buf[32];
  snprintf(buf, sizeof(buf), "/dt-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1],
           r[2], r[3], r[4], r[5], r[6], r[7]);
  return buf;
}

Status ShmSegment::Create(int ranks, size_t chunk, std::string* name) {
  Status s;
  for (int attempt = 0; attempt < 3; ++attempt) {  // a taken name: a new one
    *name = RandomName();
    s = CreateNamed(*name, ranks, chunk);
    if (s.ok() || !exists_) break;
  }
  return s;
}

Status ShmSegment::CreateNamed(const std::string& name, int ranks,
                               size_t chunk) {
  name_ = name;
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  exists_ = fd < 0 && errno == EEXIST;
  if (fd < 0) {
    name_.clear();
    return Status::IOError("shm_open " + name + ": " + strerror(errno));
  }
  // Reserve the pages now: on a full /dev/shm (64 MiB in Docker) touching
  // an unreserved page later would be SIGBUS, not an error to fall back on.
  int err = posix_fallocate(fd, 0, static_cast<off_t>(Bytes(ranks, chunk)));
  if (err != 0) {
    close(fd);
    Unlink();
    return Status::IOError(std::string("reserving shared memory: ") +
                           strerror(err));
  }
  Status s = Map(fd, ranks, chunk);
  if (!s.ok()) Unlink();
  return s;
}

Status ShmSegment::Open(const std::string& name, int ranks, size_t chunk) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::IOError("shm_open " + name + ": " + strerror(errno));
  struct stat st {};
  // Made by us with mode 0600 and our size, or someone else's.
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid() ||
      (st.st_mode & 077) != 0 ||
      static_cast<size_t>(st.st_size) != Bytes(ranks, chunk)) {
    close(fd);
    return Status::PermissionDenied(name + " is not this job's segment");
  }
  return Map(fd, ranks, chunk);
}

void ShmSegment::Unlink() {
  if (!name_.empty()) shm_unlink(name_.c_str());
  name_.clear();
}

std::atomic<uint64_t>* ShmSegment::tag(int rank, int set) const {
  return reinterpret_cast<std::atomic<uint64_t>*>(base_ +
                                                  kLine * (rank * 2 + set));
}
char* ShmSegment::line_payload(int rank, int set) const {
  static_assert(sizeof(uint64_t) + kLinePayload == kLine);
  return reinterpret_cast<char*>(tag(rank, set) + 1);
}
std::atomic<uint32_t>* ShmSegment::wake() const {
  return reinterpret_cast<std::atomic<uint32_t>*>(base_ + LineBytes(ranks_) -
                                                  kLine);
}
std::atomic<uint32_t>* ShmSegment::sleepers() const { return wake() + 1; }
std::atomic<uint64_t>* ShmSegment::arrivals() const {
  return reinterpret_cast<std::atomic<uint64_t>*>(wake() + 2);
}
char* ShmSegment::slot(int set, int rank) const {
  return base_ + LineBytes(ranks_) + chunk_ * ((ranks_ + 1) * set + rank);
}
char* ShmSegment::result(int set) const { return slot(set, ranks_); }

}  // namespace dist_train
