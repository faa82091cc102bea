// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Requeueing the job without the nodes that failed it (preflight's
// requeue policy, docs/user-guide.md "Preflight"): the job is requeued
// held, the bad hosts are added to its ExcNodeList (never replacing what
// the job already excluded), and it is released, so the next run cannot
// land on them. Each libslurm call sits behind `RequeueOps`, so the order
// and every failure are unit-tested without slurmctld.

#ifndef DIST_TRAIN_LIB_HEALTH_NODE_EXCLUSION_H_
#define DIST_TRAIN_LIB_HEALTH_NODE_EXCLUSION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/env.h"
#include "dist_train/status.h"

namespace dist_train {

// How many times preflight's requeue policy may requeue a job when
// DT_MAX_REQUEUES does not say.
constexpr uint64_t kDefaultPreflightRequeues = 3;

// The calls RequeueWithout makes; SlurmRequeueOps() makes them through
// libslurm (base/slurm_compat.h).
struct RequeueOps {
  std::function<Status(uint32_t job, std::string* excluded)> load_excluded;
  std::function<Status(uint32_t job)> requeue_held;
  std::function<Status(uint32_t job, const std::string& nodes)> set_excluded;
  std::function<Status(uint32_t job)> release;
};
RequeueOps SlurmRequeueOps();

// Requeues running job `job` without `hosts`: its ExcNodeList becomes the
// one it had plus `hosts` (*excluded). Once the requeue took, the release
// is always tried, so a failed update never leaves the job held; an error
// then says what state the job is in. SIGTERM, SIGINT and SIGHUP (the
// requeue makes Slurm end this very step) wait until it is done.
Status RequeueWithout(const RequeueOps& ops, uint32_t job,
                      const std::vector<std::string>& hosts,
                      std::string* excluded);

// The job and its requeue budget, from the task's environment:
// SLURM_JOB_ID (required), SLURM_RESTART_COUNT (0 when unset) and
// DT_MAX_REQUEUES (kDefaultPreflightRequeues when unset); errors name the
// variable.
struct RequeueBudget {
  uint32_t job = 0;
  uint64_t restarts = 0;
  uint64_t max = kDefaultPreflightRequeues;
  bool left() const { return restarts < max; }
};
Status ReadRequeueBudget(const EnvMap& env, RequeueBudget* budget);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_HEALTH_NODE_EXCLUSION_H_
