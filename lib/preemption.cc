// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "dist_train/preemption.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

extern "C" {
#include <slurm/slurm.h>
}

#include "parse.h"
#include "wire.h"

namespace dist_train {
namespace {

volatile sig_atomic_t g_stop = 0;

void OnStopSignal(int) { g_stop = 1; }

constexpr char kMagic[] = "DTCK";  // + u64 length, then the data

Status ParseSignal(const char* text, int* sig) {
  struct Named {
    const char* name;
    int sig;
  };
  for (Named n :
       {Named{"USR1", SIGUSR1}, Named{"USR2", SIGUSR2}, Named{"TERM", SIGTERM},
        Named{"INT", SIGINT}, Named{"HUP", SIGHUP}, Named{"URG", SIGURG}}) {
    if (std::strcmp(text, n.name) == 0 ||
        (std::strncmp(text, "SIG", 3) == 0 &&
         std::strcmp(text + 3, n.name) == 0)) {
      *sig = n.sig;
      return Status::OK();
    }
  }
  return Status::InvalidArgument(
      std::string("DT_PREEMPT_SIGNAL='") + text +
      "' is not one of USR1, USR2, TERM, INT, HUP or URG");
}

Status Errno(const std::string& what) {
  return Status::IOError(what + ": " + strerror(errno));
}

Status FsyncPath(const std::string& path, int flags) {
  int fd = open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Errno("open " + path);
  int rc = fsync(fd);
  close(fd);
  return rc == 0 ? Status::OK() : Errno("fsync " + path);
}

// temp file in the same directory, fsync, rename, fsync the directory.
Status WriteAtomically(const std::string& dir, const std::string& name,
                       const std::string& bytes) {
  std::string tmp = dir + "/." + name + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("create " + tmp);
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = Errno("write " + tmp);
      close(fd);
      unlink(tmp.c_str());
      return s;
    }
    off += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    Status s = Errno("fsync " + tmp);
    close(fd);
    unlink(tmp.c_str());
    return s;
  }
  close(fd);
  if (rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    Status s = Errno("rename " + tmp);
    unlink(tmp.c_str());
    return s;
  }
  return FsyncPath(dir, O_RDONLY | O_DIRECTORY);
}

Status MakeDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Errno("mkdir " + dir);
  return Status::OK();
}

std::string StepDir(const std::string& dir, uint64_t step) {
  return dir + "/step-" + std::to_string(step);
}

Status ReadFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound(path + ": no such checkpoint file");
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return Status::OK();
}

}  // namespace

Status InstallStopHandler(int sig) {
  if (sig == 0) {
    const char* env = getenv("DT_PREEMPT_SIGNAL");
    sig = SIGUSR1;
    if (env != nullptr) DT_RETURN_IF_ERROR(ParseSignal(env, &sig));
  }
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(sig, &sa, nullptr) != 0) return Errno("sigaction");
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  return Status::OK();
}

bool StopRequested() { return g_stop != 0; }
void RequestStop() { g_stop = 1; }
void ClearStopRequest() { g_stop = 0; }

Status AgreeToStop(Communicator* comm, bool* stop) {
  int32_t mine = StopRequested() ? 1 : 0, any = 0;
  DT_RETURN_IF_ERROR(
      comm->AllReduce(&mine, &any, 1, DataType::kInt32, ReduceOp::kMax));
  *stop = any != 0;
  return Status::OK();
}

Status SaveCheckpoint(Communicator* comm, const std::string& dir, uint64_t step,
                      const std::string& data) {
  std::string sdir = StepDir(dir, step);
  DT_RETURN_IF_ERROR(MakeDir(dir));
  DT_RETURN_IF_ERROR(MakeDir(sdir));
  std::string bytes = kMagic;
  PutU32(&bytes, static_cast<uint32_t>(data.size() >> 32));
  PutU32(&bytes, static_cast<uint32_t>(data.size()));
  bytes += data;
  Status mine = WriteAtomically(
      sdir, "rank-" + std::to_string(comm->rank()) + ".ckpt", bytes);
  // Everyone learns whether every rank succeeded before the step is marked.
  int32_t ok = mine.ok() ? 1 : 0, all = 0;
  DT_RETURN_IF_ERROR(
      comm->AllReduce(&ok, &all, 1, DataType::kInt32, ReduceOp::kMin));
  if (!mine.ok()) return mine;
  if (!all)
    return Status::Unavailable("checkpoint of step " + std::to_string(step) +
                               " failed on another rank; not marked complete");
  if (comm->rank() == 0) {
    DT_RETURN_IF_ERROR(
        WriteAtomically(dir, "LATEST", std::to_string(step) + "\n"));
  }
  return comm->Barrier();
}

Status LoadLatestCheckpoint(const std::string& dir, int rank, uint64_t* step,
                            std::string* data) {
  std::string latest;
  if (!ReadFile(dir + "/LATEST", &latest).ok()) {
    return Status::NotFound(dir + ": no complete checkpoint");
  }
  uint64_t n = 0;
  if (latest.empty() || latest.back() != '\n' ||
      !ParseUint(latest.substr(0, latest.size() - 1), 0, UINT64_MAX, &n)) {
    return Status::InvalidArgument(dir + "/LATEST is damaged");
  }
  std::string path =
                  StepDir(dir, n) + "/rank-" + std::to_string(rank) + ".ckpt",
              bytes;
  DT_RETURN_IF_ERROR(ReadFile(path, &bytes));
  size_t pos = 4;
  uint32_t hi = 0, lo = 0;
  if (bytes.compare(0, 4, kMagic) != 0 || !GetU32(bytes, &pos, &hi) ||
      !GetU32(bytes, &pos, &lo) ||
      bytes.size() - pos != ((static_cast<uint64_t>(hi) << 32) | lo)) {
    return Status::InvalidArgument(path + " is damaged (bad header or length)");
  }
  *step = n;
  *data = bytes.substr(pos);
  return Status::OK();
}

Status JobSecondsLeft(int64_t* seconds) {
  const char* job = getenv("SLURM_JOB_ID");
  uint64_t id = 0;
  if (job != nullptr && ParseUint(job, 1, UINT32_MAX, &id)) {
    long left = slurm_get_rem_time(static_cast<uint32_t>(id));
    if (left >= 0 && left < (1L << 40)) return *seconds = left, Status::OK();
  }
  const char* deadline = getenv("DT_JOB_DEADLINE");
  uint64_t end = 0;
  if (deadline != nullptr && ParseUint(deadline, 1, UINT64_MAX >> 1, &end)) {
    *seconds = static_cast<int64_t>(end) - static_cast<int64_t>(time(nullptr));
    return Status::OK();
  }
  return Status::NotFound(
      "no job time limit known (not in a Slurm job, or no limit)");
}

Status RequeueJob(int max_requeues) {
  const char* job = getenv("SLURM_JOB_ID");
  uint64_t id = 0, restarts = 0, max = 0;
  if (job == nullptr || !ParseUint(job, 1, UINT32_MAX, &id)) {
    return Status::NotFound("SLURM_JOB_ID is not set: not inside a Slurm job");
  }
  const char* count = getenv("SLURM_RESTART_COUNT");
  if (count != nullptr && !ParseUint(count, 0, UINT32_MAX, &restarts)) {
    return Status::InvalidArgument(std::string("SLURM_RESTART_COUNT='") +
                                   count + "' is not a count");
  }
  bool limited = max_requeues >= 0;
  if (!limited) {
    const char* env = getenv("DT_MAX_REQUEUES");
    if (env != nullptr && !ParseUint(env, 0, UINT32_MAX, &max)) {
      return Status::InvalidArgument(std::string("DT_MAX_REQUEUES='") + env +
                                     "' is not a count");
    }
    limited = env != nullptr;
  } else {
    max = static_cast<uint64_t>(max_requeues);
  }
  if (limited && restarts >= max) {
    return Status::PermissionDenied(
        "job " + std::string(job) + " was already requeued " +
        std::to_string(restarts) + " times (limit " + std::to_string(max) +
        ")");
  }
  // SLURM_JOB_ID is this array task's own id, so arrays requeue one task.
  if (slurm_requeue(static_cast<uint32_t>(id), 0) != 0) {
    return Status::Unavailable("requeue of job " + std::string(job) +
                               " failed: " + slurm_strerror(slurm_get_errno()));
  }
  return Status::OK();
}

}  // namespace dist_train
