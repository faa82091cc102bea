// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/node_exclusion.h"

#include <atomic>

#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "base/node_set.h"
#include "base/output_drain.h"
#include "base/slurm_compat.h"

namespace dist_train {
namespace {

constexpr int kTerminations[] = {SIGTERM, SIGINT, SIGHUP};
volatile sig_atomic_t g_deferred_signal = 0;

extern "C" void DeferTermination(int sig) { g_deferred_signal = sig; }

// Holds SIGTERM, SIGINT and SIGHUP for its lifetime: the requeue makes
// Slurm signal this step, and the exclusion must follow it. Blocked in
// this thread, and caught (noted) in the process's others, whose masks
// this thread cannot change; at the end the old handlers come back, and a
// signal that came meanwhile is delivered to them.
class TerminationDeferred {
 public:
  TerminationDeferred() {
    g_deferred_signal = 0;
    struct sigaction note {};
    note.sa_handler = DeferTermination;
    sigemptyset(&note.sa_mask);
    note.sa_flags = SA_RESTART;
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < 3; ++i) {
      sigaddset(&set, kTerminations[i]);
      sigaction(kTerminations[i], &note, &old_[i]);
    }
    sigprocmask(SIG_BLOCK, &set, &old_mask_);
  }
  ~TerminationDeferred() {
    for (size_t i = 0; i < 3; ++i)
      sigaction(kTerminations[i], &old_[i], nullptr);
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);  // pending ones: now
    if (g_deferred_signal != 0) raise(g_deferred_signal);
  }
  TerminationDeferred(const TerminationDeferred&) = delete;
  TerminationDeferred& operator=(const TerminationDeferred&) = delete;

 private:
  struct sigaction old_[3];
  sigset_t old_mask_;
};

}  // namespace

RequeueOps SlurmRequeueOps() {
  RequeueOps ops;
  ops.load_excluded = [](uint32_t job, std::string* nodes) {
    DT_RETURN_IF_ERROR(SlurmInitOnce());
    return LoadJobExcludedNodes(job, nodes);
  };
  // What this task said before (a preflight report, "requeueing job ...")
  // must have left its pipes to slurmstepd before the requeue ends the
  // step: up to a second each for stdout and stderr (base/output_drain.h).
  ops.requeue = [](uint32_t job) {
    fflush(nullptr);
    WaitUntilOutputRead(STDOUT_FILENO, 1.0);
    WaitUntilOutputRead(STDERR_FILENO, 1.0);
    return SlurmRequeue(job);
  };
  ops.set_excluded = SlurmSetExcludedNodes;
  return ops;
}

Status RequeueWithout(const RequeueOps& ops, uint32_t job,
                      const std::vector<std::string>& hosts,
                      std::string* excluded) {
  std::string before;
  DT_RETURN_IF_ERROR(ops.load_excluded(job, &before));
  DT_RETURN_IF_ERROR(MergeNodeLists(before, hosts, "ExcNodeList", excluded));
  TerminationDeferred deferred;
  DT_RETURN_IF_ERROR(ops.requeue(job));
  Status set = ops.set_excluded(job, *excluded);
  if (!set.ok()) {
    return Status::Unavailable(set.message() + "; job " + std::to_string(job) +
                               " is requeued without the exclusion");
  }
  return Status::OK();
}

void RequeueAndSay(const EnvMap& env, const RequeueOps& ops,
                   const std::vector<std::string>& hosts,
                   const std::string& prefix, const SayLine& say) {
  RequeueBudget b;
  Status s = ReadRequeueBudget(env, &b);
  std::string job = std::to_string(b.job);
  if (s.ok() && !b.left()) {
    say(prefix + "not requeued: job " + job + " was requeued " +
        std::to_string(b.restarts) + " times (limit " + std::to_string(b.max) +
        ", DT_MAX_REQUEUES)");
    return;
  }
  if (s.ok()) {
    std::string names;
    for (const std::string& h : hosts) names += (names.empty() ? "" : ",") + h;
    say(prefix + "requeueing job " + job + " (requeue " +
        std::to_string(b.restarts + 1) + " of " + std::to_string(b.max) + ") " +
        (names.empty() ? "excluding no node" : "without " + names));
    std::string excluded;
    s = RequeueWithout(ops, b.job, hosts, &excluded);
    if (s.ok())
      say(prefix + "job " + job + " requeued; its ExcNodeList is now " +
          (excluded.empty() ? "empty" : excluded));
  }
  if (!s.ok()) say(prefix + "not requeued: " + s.message());
}

void SayRequeueHistory(const EnvMap& env, const RequeueOps& ops,
                       const std::string& prefix, const SayLine& say) {
  RequeueBudget b;
  if (!ReadRequeueBudget(env, &b).ok() || b.restarts == 0) return;
  std::string excluded;
  Status s = ops.load_excluded(b.job, &excluded);
  std::string shown = !s.ok()            ? "unknown (" + s.message() + ")"
                      : excluded.empty() ? std::string("empty")
                                         : excluded;
  say(prefix + "run " + std::to_string(b.restarts + 1) + " of job " +
      std::to_string(b.job) + " (requeued " + std::to_string(b.restarts) +
      " of at most " + std::to_string(b.max) + " times); its ExcNodeList is " +
      shown);
}

bool ClaimRequeueHistory() {
  static std::atomic<bool> claimed{false};
  return !claimed.exchange(true);
}

Status ReadRequeueBudget(const EnvMap& env, RequeueBudget* budget) {
  std::optional<uint64_t> job, restarts, max;
  DT_RETURN_IF_ERROR(EnvUint(env, "SLURM_JOB_ID", 1, UINT32_MAX, &job));
  if (!job) return Status::NotFound("SLURM_JOB_ID is not set");
  DT_RETURN_IF_ERROR(EnvCount(env, "SLURM_RESTART_COUNT", &restarts));
  DT_RETURN_IF_ERROR(EnvCount(env, "DT_MAX_REQUEUES", &max));
  budget->job = static_cast<uint32_t>(*job);
  budget->restarts = restarts.value_or(0);
  budget->max = max.value_or(kDefaultNodeRequeues);
  return Status::OK();
}

}  // namespace dist_train
