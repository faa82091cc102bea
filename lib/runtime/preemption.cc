// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "dist_train/preemption.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <optional>

#include "base/coding.h"
#include "base/env.h"
#include "base/slurm_compat.h"
#include "contract/job_deadline.h"
#include "runtime/checkpoint_files.h"

namespace dist_train {
namespace {

volatile sig_atomic_t g_stop = 0;

void OnStopSignal(int) { g_stop = 1; }

constexpr char kMagic[] = "DTCK";  // + u64 length, then the data

// USR1 or SIGUSR1 and the like: the signals a job may be warned with.
bool ParseSignal(const std::string& text, int* sig) {
  struct Named {
    const char* name;
    int sig;
  };
  const std::string bare =
      text.compare(0, 3, "SIG") == 0 ? text.substr(3) : text;
  for (Named n :
       {Named{"USR1", SIGUSR1}, Named{"USR2", SIGUSR2}, Named{"TERM", SIGTERM},
        Named{"INT", SIGINT}, Named{"HUP", SIGHUP}, Named{"URG", SIGURG}}) {
    if (bare == n.name) return *sig = n.sig, true;
  }
  return false;
}

Status SignalFromEnv(int* sig) {
  *sig = SIGUSR1;
  std::optional<std::string> raw;
  return EnvParse(
      ProcessEnv(), "DT_PREEMPT_SIGNAL",
      [sig](const std::string& v) { return ParseSignal(v, sig); },
      "is not one of USR1, USR2, TERM, INT, HUP or URG", &raw);
}

// SLURM_JOB_ID: unset outside Slurm, else a job id (never 0).
Status JobId(const EnvMap& env, std::optional<uint64_t>* id) {
  return EnvUint(env, "SLURM_JOB_ID", 1, UINT32_MAX, id);
}

// The requeue limit: `max_requeues` when >= 0, else DT_MAX_REQUEUES when
// set, else none.
Status RequeueLimit(const EnvMap& env, int max_requeues,
                    std::optional<uint64_t>* max) {
  if (max_requeues < 0) return EnvCount(env, "DT_MAX_REQUEUES", max);
  *max = static_cast<uint64_t>(max_requeues);
  return Status::OK();
}

std::string RankName(int rank) {
  return "rank-" + std::to_string(rank) + ".ckpt";
}

// This rank's file of `step`, with its header.
Status WriteRankFile(const StepDir& dir, int rank, const std::string& data) {
  std::string bytes = kMagic;
  PutU32(&bytes, static_cast<uint32_t>(data.size() >> 32));
  PutU32(&bytes, static_cast<uint32_t>(data.size()));
  bytes += data;
  return WriteAtomically(dir.fd.get(), dir.path, RankName(rank), bytes);
}

// The data of a checkpoint file: its header's length must be the file's
// own, checked before anything is allocated.
Status ReadRankFile(int step_fd, const std::string& name,
                    const std::string& path, std::string* data) {
  Fd fd;
  struct stat st {};
  DT_RETURN_IF_ERROR(OpenOwnFile(step_fd, name, path, &fd, &st));
  const Status damaged =
      Status::InvalidArgument(path + " is damaged (bad header or length)");
  const size_t header = 12, size = static_cast<size_t>(st.st_size);
  std::string head;
  if (size < header || !ReadExactly(fd.get(), header, 0, path, &head).ok())
    return damaged;
  size_t pos = 4;
  uint32_t hi = 0, lo = 0;
  if (head.compare(0, 4, kMagic) != 0 || !GetU32(head, &pos, &hi) ||
      !GetU32(head, &pos, &lo) ||
      size - header != ((static_cast<uint64_t>(hi) << 32) | lo))
    return damaged;
  return ReadExactly(fd.get(), size - header, header, path, data);
}

}  // namespace

Status InstallStopHandler(int sig) {
  if (sig == 0) DT_RETURN_IF_ERROR(SignalFromEnv(&sig));
  if (sig < 0 || sig >= NSIG)
    return Status::InvalidArgument("signal " + std::to_string(sig) +
                                   " is not a signal number");
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(sig, &sa, nullptr) != 0)
    return Errno("sigaction for signal " + std::to_string(sig));
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
  StepDir step_dir;
  Status mine = MakeStepDir(dir, step, &step_dir);
  if (mine.ok()) mine = WriteRankFile(step_dir, comm->rank(), data);
  return AgreeAndMark(comm, mine, step_dir, step);
}

Status LoadLatestCheckpoint(const std::string& dir, int rank, uint64_t* step,
                            std::string* data) {
  StepDir step_dir;
  uint64_t n = 0;
  DT_RETURN_IF_ERROR(OpenLatestStep(dir, &n, &step_dir));
  DT_RETURN_IF_ERROR(ReadRankFile(step_dir.fd.get(), RankName(rank),
                                  step_dir.path + "/" + RankName(rank), data));
  *step = n;
  return Status::OK();
}

// The job's deadline live from slurmctld: true when it answered with an end
// time (*deadline 0: no limit).
bool LiveDeadline(uint32_t job, int64_t* deadline) {
  JobTimes times;
  if (!SlurmInitOnce().ok() || !LoadJobTimes(job, &times).ok() ||
      times.end_time <= 0)
    return false;
  *deadline = JobDeadline(times);
  return true;
}

// Both variables are checked before either is used, so a bad one is found
// whether or not slurmctld answers.
Status JobSecondsLeft(int64_t* seconds) {
  EnvMap env = ProcessEnv();
  std::optional<uint64_t> job;
  std::optional<int64_t> end;
  DT_RETURN_IF_ERROR(JobId(env, &job));
  DT_RETURN_IF_ERROR(EnvEpochSeconds(env, kDeadlineVar, &end));
  const int64_t now = static_cast<int64_t>(time(nullptr));
  int64_t live = 0;
  if (job && LiveDeadline(static_cast<uint32_t>(*job), &live)) {
    if (live > 0)
      return *seconds = std::max<int64_t>(live - now, 0), Status::OK();
    return Status::NotFound("job " + std::to_string(*job) +
                            " has no time limit");
  }
  if (end) return *seconds = *end - now, Status::OK();
  return Status::NotFound(
      "no job time limit known (not in a Slurm job, or no limit)");
}

Status RequeueJob(int max_requeues) {
  EnvMap env = ProcessEnv();
  std::optional<uint64_t> job, restarts, max;
  DT_RETURN_IF_ERROR(JobId(env, &job));
  if (!job)
    return Status::NotFound("SLURM_JOB_ID is not set: not inside a Slurm job");
  DT_RETURN_IF_ERROR(EnvCount(env, "SLURM_RESTART_COUNT", &restarts));
  DT_RETURN_IF_ERROR(RequeueLimit(env, max_requeues, &max));
  if (max && restarts.value_or(0) >= *max) {
    return Status::PermissionDenied(
        "job " + std::to_string(*job) + " was already requeued " +
        std::to_string(restarts.value_or(0)) + " times (limit " +
        std::to_string(*max) + ")");
  }
  // SLURM_JOB_ID is this array task's own id, so arrays requeue one task.
  DT_RETURN_IF_ERROR(SlurmInitOnce());
  return SlurmRequeue(static_cast<uint32_t>(*job));
}

}  // namespace dist_train
