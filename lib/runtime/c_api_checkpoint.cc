// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The C API's checkpoint files: the commit protocol of SaveCheckpoint
// (runtime/checkpoint_files.h) for files that other code writes, such as
// torch.save. Their name is rank-R.bin, beside SaveCheckpoint's
// rank-R.ckpt; both share the step directories and LATEST.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "dist_train/dist_train.h"
#include "runtime/c_api_internal.h"
#include "runtime/checkpoint_files.h"

struct dt_checkpoint {
  dist_train::StepDir dir;  // checked, held open from begin to free
  uint64_t step = 0;
  std::string name;      // rank-R.bin
  std::string tmp;       // its temp name in dir.fd
  std::string tmp_path;  // dir.path + "/" + tmp, for the caller and errors
  bool renamed = false;  // the temp file is gone (it has its final name)
};

namespace dist_train {
namespace capi {
namespace {

std::string RankFileName(int rank) {
  return "rank-" + std::to_string(rank) + ".bin";
}

Status CheckDirAndRank(const char* fn, const char* dir, int rank) {
  DT_RETURN_IF_ERROR(NotNull(dir, fn, "dir"));
  if (*dir == '\0')
    return Status::InvalidArgument(std::string(fn) + ": dir is empty");
  if (rank < 0)
    return Status::InvalidArgument(std::string(fn) + ": rank " +
                                   std::to_string(rank) + " is negative");
  return Status::OK();
}

// The step directory and an empty temp file of ours in it, which the
// caller then writes by its path.
Status Begin(const char* dir, uint64_t step, int rank, dt_checkpoint** out) {
  DT_RETURN_IF_ERROR(NotNull(out, "dt_checkpoint_begin", "out"));
  *out = nullptr;
  DT_RETURN_IF_ERROR(CheckDirAndRank("dt_checkpoint_begin", dir, rank));
  auto ck = std::make_unique<dt_checkpoint>();
  DT_RETURN_IF_ERROR(MakeStepDir(dir, step, &ck->dir));
  ck->step = step;
  ck->name = RankFileName(rank);
  ck->tmp = TempName(ck->name);
  ck->tmp_path = ck->dir.path + "/" + ck->tmp;
  Fd fd;
  fd.Reset(openat(ck->dir.fd.get(), ck->tmp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return Errno("create " + ck->tmp_path);
  *out = ck.release();
  return Status::OK();
}

// fsync what the caller wrote (still a regular file of ours, reached
// without following a symlink), rename it to its final name, fsync the
// step directory. Once done, again is a no-op.
Status Finish(dt_checkpoint* ck) {
  DT_RETURN_IF_ERROR(NotNull(ck, "dt_checkpoint_finish", "ck"));
  if (ck->renamed) return Status::OK();
  const int dir_fd = ck->dir.fd.get();
  Fd fd;
  struct stat st {};
  DT_RETURN_IF_ERROR(OpenOwnFile(dir_fd, ck->tmp, ck->tmp_path, &fd, &st));
  if (fsync(fd.get()) != 0) return Errno("fsync " + ck->tmp_path);
  if (renameat(dir_fd, ck->tmp.c_str(), dir_fd, ck->name.c_str()) != 0)
    return Errno("rename " + ck->tmp_path);
  ck->renamed = true;
  if (fsync(dir_fd) != 0) return Errno("fsync " + ck->dir.path);
  return Status::OK();
}

Status MarkComplete(const char* dir, uint64_t step) {
  DT_RETURN_IF_ERROR(NotNull(dir, "dt_checkpoint_mark_complete", "dir"));
  StepDir d;
  DT_RETURN_IF_ERROR(OpenStepDir(dir, step, &d));
  return WriteLatest(d.top_fd.get(), d.top, step);
}

// A complete step without this rank's file is not "no checkpoint": most
// likely the job came back with another number of ranks.
Status OpenLatest(const char* dir, int rank, uint64_t* step, int* fd) {
  const char* fn = "dt_checkpoint_open_latest";
  DT_RETURN_IF_ERROR(CheckDirAndRank(fn, dir, rank));
  DT_RETURN_IF_ERROR(NotNull(step, fn, "step"));
  DT_RETURN_IF_ERROR(NotNull(fd, fn, "fd"));
  StepDir d;
  uint64_t n = 0;
  DT_RETURN_IF_ERROR(OpenLatestStep(dir, &n, &d));
  const std::string path = d.path + "/" + RankFileName(rank);
  Fd file;
  struct stat st {};
  Status s = OpenOwnFile(d.fd.get(), RankFileName(rank), path, &file, &st);
  if (s.code() == Status::Code::kNotFound)
    return Status::InvalidArgument(
        path + ": does not exist, but " + d.top + "/LATEST marks step " +
        std::to_string(n) +
        " complete (did the job come back with another number of ranks?)");
  DT_RETURN_IF_ERROR(s);
  // Opened O_NONBLOCK against a planted FIFO; a regular file reads the same
  // without it, and the caller gets an ordinary descriptor.
  int flags = fcntl(file.get(), F_GETFL);
  if (flags < 0 || fcntl(file.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    return Errno("fcntl " + path);
  *step = n;
  *fd = file.Release();
  return Status::OK();
}

}  // namespace
}  // namespace capi
}  // namespace dist_train

using dist_train::Status;
using dist_train::capi::Guard;
using dist_train::capi::NotNull;

extern "C" {

int dt_checkpoint_begin(const char* dir, uint64_t step, int rank,
                        dt_checkpoint** out) {
  return Guard("dt_checkpoint_begin",
               [&] { return dist_train::capi::Begin(dir, step, rank, out); });
}

const char* dt_checkpoint_path(const dt_checkpoint* ck) {
  return ck == nullptr ? "" : ck->tmp_path.c_str();
}

int dt_checkpoint_finish(dt_checkpoint* ck) {
  return Guard("dt_checkpoint_finish",
               [&] { return dist_train::capi::Finish(ck); });
}

int dt_checkpoint_commit(dt_checkpoint* ck, dt_comm* comm) {
  return Guard("dt_checkpoint_commit", [&] {
    DT_RETURN_IF_ERROR(NotNull(ck, "dt_checkpoint_commit", "ck"));
    DT_RETURN_IF_ERROR(NotNull(comm, "dt_checkpoint_commit", "comm"));
    Status mine = dist_train::capi::Finish(ck);
    return dist_train::AgreeAndMark(comm->impl.get(), mine, ck->dir, ck->step);
  });
}

void dt_checkpoint_free(dt_checkpoint* ck) {
  if (ck == nullptr) return;
  if (!ck->renamed) unlinkat(ck->dir.fd.get(), ck->tmp.c_str(), 0);
  delete ck;
}

int dt_checkpoint_mark_complete(const char* dir, uint64_t step) {
  return Guard("dt_checkpoint_mark_complete",
               [&] { return dist_train::capi::MarkComplete(dir, step); });
}

int dt_checkpoint_open_latest(const char* dir, int rank, uint64_t* step,
                              int* fd) {
  return Guard("dt_checkpoint_open_latest", [&] {
    return dist_train::capi::OpenLatest(dir, rank, step, fd);
  });
}

}  // extern "C"
