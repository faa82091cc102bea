// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The file side of the checkpoint commit protocol, shared by
// SaveCheckpoint / LoadLatestCheckpoint (dist_train/preemption.h, files
// rank-R.ckpt with a header) and the C API's dt_checkpoint_* (files
// rank-R.bin written by other code): checked directories, atomic writes,
// dir/LATEST, and the agreement that marks a step complete.
//
// Every directory is reached through a descriptor that was checked (this
// user's, not a symlink, not writable by every user unless sticky), so no
// path component can be swapped after the check.

#ifndef DIST_TRAIN_LIB_RUNTIME_CHECKPOINT_FILES_H_
#define DIST_TRAIN_LIB_RUNTIME_CHECKPOINT_FILES_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "dist_train/runtime.h"
#include "dist_train/status.h"

namespace dist_train {

// Closes its descriptor when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  ~Fd() { Reset(-1); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset(int fd);  // keeps errno: Reset(open(...)) then reads it
  // Gives the descriptor to the caller, who closes it.
  int Release();

 private:
  int fd_ = -1;
};

// IOError "<what>: <strerror(errno)>".
Status Errno(const std::string& what);

// A directory of ours under `at` (not a symlink, not writable by every
// user unless sticky), opened; `path` names it in errors. Make... creates
// it first (mode 0700) unless it exists: everything below is reached
// through this descriptor.
Status OpenOwnDirectory(int at, const std::string& name,
                        const std::string& path, Fd* fd);
Status MakeOwnDirectory(int at, const std::string& name,
                        const std::string& path, Fd* fd);

// A regular file of ours under `at`, opened read-only without following a
// symlink (checked on the open descriptor). `path` names it in errors.
Status OpenOwnFile(int at, const std::string& name, const std::string& path,
                   Fd* fd, struct stat* st);

// The whole of a file of ours under `at` (as OpenOwnFile checks it), of at
// most `max_bytes`; a larger one is an error naming `path`.
Status ReadOwnFile(int at, const std::string& name, const std::string& path,
                   size_t max_bytes, std::string* text);

// Reads `size` bytes at `offset`; a file that ends early is an error.
Status ReadExactly(int fd, size_t size, off_t offset, const std::string& path,
                   std::string* out);

// "." + name + ".tmp." + 16 hex digits nobody can predict.
std::string TempName(const std::string& name);

// A new temp file (O_EXCL | O_NOFOLLOW, TempName, mode 0600), fsync,
// rename over `name`, fsync the directory: a planted symlink or file is
// never written through, only replaced. `durable` false leaves out both
// fsyncs: for status a process rewrites every fraction of a second (the
// watchdog's live records, often on shared storage), where a crash may
// lose the last one but readers still never see half a file.
Status WriteAtomically(int dir_fd, const std::string& dir,
                       const std::string& name, const std::string& bytes,
                       bool durable = true);

// A checkpoint directory and one step directory in it, both checked.
struct StepDir {
  std::string top;   // the checkpoint directory, without a trailing slash
  std::string path;  // top + "/step-N"
  Fd top_fd;
  Fd fd;
};

// Makes (mode 0700, unless they exist) and opens `dir` and dir/step-N.
Status MakeStepDir(const std::string& dir, uint64_t step, StepDir* out);

// Opens the existing `dir` and dir/step-N (NotFound naming the missing one).
Status OpenStepDir(const std::string& dir, uint64_t step, StepDir* out);

// Opens `dir` and the step its LATEST names. NotFound "<dir>: no complete
// checkpoint" when `dir` or LATEST is missing; LATEST over 32 bytes or not
// "<step>\n" is damage.
Status OpenLatestStep(const std::string& dir, uint64_t* step, StepDir* out);

// Writes dir/LATEST ("<step>\n", atomically) through the checked `top_fd`.
Status WriteLatest(int top_fd, const std::string& top, uint64_t step);

// Collective, after each rank wrote its file of `step` (`mine` says how
// that went): every rank learns whether all succeeded, then rank 0 writes
// LATEST, then a barrier, so no rank goes on before the step is marked.
// `mine` when it failed; Unavailable "checkpoint of step N failed on
// another rank; not marked complete" when another rank failed.
Status AgreeAndMark(Communicator* comm, const Status& mine, const StepDir& dir,
                    uint64_t step);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_CHECKPOINT_FILES_H_
