// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// What dt-status shows of a running step (docs/user-guide.md, "Watching a
// job: dt-status"): the live record every rank's watchdog keeps in the
// step's watchdog directory (runtime/step_stats.h), the stragglers rank 0
// named, the hang summary and the step's preflight report, as a table or
// as JSON:
//
//   job 42, step 0: 4 ranks, watchdog 60 s
//   (/home/u/run/dist-train-watchdog-42.0) RANK  HOST   PID   STEPS  LAST
//   PROGRESS  STEP ms  COMPUTE ms  FLAGS
//      0  node1  811     120  0.1 s ago         24.0        20.0
//      2  node3  812     120  0.0 s ago         24.0        24.1  straggler
//
// The directory is the owner's alone (0700, checked): another user's
// dt-status cannot read it, and files in it must be the caller's own.

#ifndef DIST_TRAIN_LIB_HEALTH_STEP_STATUS_H_
#define DIST_TRAIN_LIB_HEALTH_STEP_STATUS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "dist_train/status.h"
#include "runtime/step_stats.h"

namespace dist_train {

struct StepStatus {
  std::string job;  // from the directory's name
  std::string step;
  std::string dir;
  std::vector<LiveRecord> ranks;        // by rank
  std::vector<std::string> unreadable;  // files named, with why
  std::string stragglers;    // stragglers.txt: the lines that named them
  std::string hang_summary;  // summary.txt; "" when no hang
  std::string preflight;     // preflight.txt: the step's preflight report
  // Slurm says the job is no longer running: every rank ended (a watchdog
  // killed with its step cannot always say so itself).
  bool job_ended = false;
};

// The job's step directories under `base` ("dist-train-watchdog-JOB.STEP"),
// numbered steps in order, others after. NotFound when there is none.
Status FindStepDirs(const std::string& base, const std::string& job,
                    std::vector<std::string>* names);

// Reads one step directory (must be the caller's own, not a link).
Status ReadStepStatus(const std::string& dir, const std::string& name,
                      StepStatus* status);

// The ranks a line of the straggler list or hang summary names.
std::set<int> NamedRanks(const std::string& lines, const std::string& after);

// A record is stale when its worker did not end and its watchdog has not
// written it for this long (its node is gone, or stopped).
constexpr int64_t kStaleSeconds = 10;

std::string FormatStatusTable(const StepStatus& status, int64_t now);
std::string FormatStatusJson(const StepStatus& status, int64_t now);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_HEALTH_STEP_STATUS_H_
