// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Requeueing the job without the nodes that failed it (the requeue
// policies of preflight and of the hang watchdog, docs/user-guide.md
// "Preflight" and "Hang watchdog"): the job is requeued, then the bad
// hosts are added to its ExcNodeList (never replacing what the job already
// excluded). A requeued running job is pending at once (slurmctld then
// takes ExcNodeList updates) but cannot start again before this very step
// has ended and Slurm's requeue delay has passed, so the next run cannot
// land on them. (A held requeue and a release, the first design, could
// leave the job held: the release raced the requeue's end on a loaded
// machine.) Each libslurm call sits behind `RequeueOps`, so the order and
// every failure are unit-tested without slurmctld.

#ifndef DIST_TRAIN_LIB_RUNTIME_NODE_EXCLUSION_H_
#define DIST_TRAIN_LIB_RUNTIME_NODE_EXCLUSION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/env.h"
#include "dist_train/status.h"

namespace dist_train {

// How many times a requeue policy (preflight's, the watchdog's) may
// requeue a job when DT_MAX_REQUEUES does not say.
constexpr uint64_t kDefaultNodeRequeues = 3;

// The calls RequeueWithout makes; SlurmRequeueOps() makes them through
// libslurm (base/slurm_compat.h).
struct RequeueOps {
  std::function<Status(uint32_t job, std::string* excluded)> load_excluded;
  std::function<Status(uint32_t job)> requeue;
  std::function<Status(uint32_t job, const std::string& nodes)> set_excluded;
};
RequeueOps SlurmRequeueOps();

// Requeues running job `job` without `hosts`: its ExcNodeList becomes the
// one it had plus `hosts` (*excluded). An exclusion that slurmctld refuses
// after the requeue took is an error that says the job is requeued without
// it. SIGTERM, SIGINT and SIGHUP (the requeue makes Slurm end this very
// step) wait until both calls are done.
Status RequeueWithout(const RequeueOps& ops, uint32_t job,
                      const std::vector<std::string>& hosts,
                      std::string* excluded);

// The job and its requeue budget, from the task's environment:
// SLURM_JOB_ID (required), SLURM_RESTART_COUNT (0 when unset) and
// DT_MAX_REQUEUES (kDefaultNodeRequeues when unset); errors name the
// variable.
struct RequeueBudget {
  uint32_t job = 0;
  uint64_t restarts = 0;
  uint64_t max = kDefaultNodeRequeues;
  bool left() const { return restarts < max; }
};
Status ReadRequeueBudget(const EnvMap& env, RequeueBudget* budget);

// A policy's requeue, as task 0 does it: within the budget, requeues the
// job without `hosts`, saying each step through `say` before it is taken
// (each line whole, starting with `prefix`, e.g. "dist-train: watchdog: "):
// the requeue ends this very step, and what comes after may be cut.
//   PREFIXrequeueing job 7 (requeue 1 of 3) without node3
//   PREFIXjob 7 requeued; its ExcNodeList is now node[1,3]
//   PREFIXnot requeued: job 7 was requeued 3 times (limit 3, DT_MAX_REQUEUES)
using SayLine = std::function<void(const std::string& line)>;
void RequeueAndSay(const EnvMap& env, const RequeueOps& ops,
                   const std::vector<std::string>& hosts,
                   const std::string& prefix, const SayLine& say);

// On a requeued run (SLURM_RESTART_COUNT > 0), the line that keeps the
// history in the job's log; nothing on a first run:
//   PREFIXrun 2 of job 7 (requeued 1 of at most 3 times); its ExcNodeList is
//   node3
void SayRequeueHistory(const EnvMap& env, const RequeueOps& ops,
                       const std::string& prefix, const SayLine& say);

// Whether this process is the first to claim that line: rank 0's
// communicator (node-loss=requeue) and its watchdog (watchdog-policy=
// requeue) would each say it, so with both set the job's log had it twice.
// Whichever starts first says it (the watchdog claims before it forks).
bool ClaimRequeueHistory();

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_NODE_EXCLUSION_H_
