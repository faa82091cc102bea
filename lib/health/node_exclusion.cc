// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/node_exclusion.h"

#include <signal.h>

#include "base/node_set.h"
#include "base/slurm_compat.h"

namespace dist_train {
namespace {

// Holds SIGTERM, SIGINT and SIGHUP for its lifetime: the requeue makes
// Slurm signal this step, and the hold must be followed by the release.
class TerminationDeferred {
 public:
  TerminationDeferred() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old_);
  }
  ~TerminationDeferred() { sigprocmask(SIG_SETMASK, &old_, nullptr); }
  TerminationDeferred(const TerminationDeferred&) = delete;
  TerminationDeferred& operator=(const TerminationDeferred&) = delete;

 private:
  sigset_t old_;
};

}  // namespace

RequeueOps SlurmRequeueOps() {
  RequeueOps ops;
  ops.load_excluded = [](uint32_t job, std::string* nodes) {
    DT_RETURN_IF_ERROR(SlurmInitOnce());
    return LoadJobExcludedNodes(job, nodes);
  };
  ops.requeue_held = SlurmRequeueHeld;
  ops.set_excluded = SlurmSetExcludedNodes;
  ops.release = SlurmReleaseJob;
  return ops;
}

Status RequeueWithout(const RequeueOps& ops, uint32_t job,
                      const std::vector<std::string>& hosts,
                      std::string* excluded) {
  std::string before;
  DT_RETURN_IF_ERROR(ops.load_excluded(job, &before));
  DT_RETURN_IF_ERROR(MergeNodeLists(before, hosts, "ExcNodeList", excluded));
  TerminationDeferred deferred;
  DT_RETURN_IF_ERROR(ops.requeue_held(job));
  Status set = ops.set_excluded(job, *excluded);
  Status released = ops.release(job);
  std::string id = std::to_string(job);
  if (!released.ok()) {
    return Status::Unavailable(
        released.message() + "; job " + id +
        " is requeued but held: release it with `scontrol release " + id + "`" +
        (set.ok()
             ? ""
             : " (and its ExcNodeList was not set: " + set.message() + ")"));
  }
  if (!set.ok()) {
    return Status::Unavailable(set.message() + "; job " + id +
                               " is requeued without the exclusion");
  }
  return Status::OK();
}

Status ReadRequeueBudget(const EnvMap& env, RequeueBudget* budget) {
  std::optional<uint64_t> job, restarts, max;
  DT_RETURN_IF_ERROR(EnvUint(env, "SLURM_JOB_ID", 1, UINT32_MAX, &job));
  if (!job) return Status::NotFound("SLURM_JOB_ID is not set");
  DT_RETURN_IF_ERROR(EnvCount(env, "SLURM_RESTART_COUNT", &restarts));
  DT_RETURN_IF_ERROR(EnvCount(env, "DT_MAX_REQUEUES", &max));
  budget->job = static_cast<uint32_t>(*job);
  budget->restarts = restarts.value_or(0);
  budget->max = max.value_or(kDefaultPreflightRequeues);
  return Status::OK();
}

}  // namespace dist_train
