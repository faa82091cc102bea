// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// How dt-run's local group of workers ended: success, preemption or
// failure, from the workers' exit codes (pure; unit-tested).

#ifndef DIST_TRAIN_LIB_LAUNCHER_GROUP_EXIT_H_
#define DIST_TRAIN_LIB_LAUNCHER_GROUP_EXIT_H_

#include <vector>

namespace dist_train {

struct GroupOutcome {
  int exit_code = 0;         // dt-run's exit status for this group
  bool preempted = false;    // every worker ended 0 or kPreemptedExitCode
  bool restartable = false;  // a failure that --max-restarts may retry
};

// `codes`: each worker's exit code in the order they ended (128+N when
// killed by signal N). `warned`: dt-run received a preemption warning.
//   - all 0: exit 0;
//   - all 0 or kPreemptedExitCode (at least one): exit 75, preempted, no
//     restart;
//   - otherwise the first other code: a failure, restartable unless a
//     warning came (the job is going away; restarting would waste it).
GroupOutcome SummarizeGroup(const std::vector<int>& codes, bool warned);

// Whether a worker's exit code means the group should be stopped now.
bool IsFailureCode(int code);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_LAUNCHER_GROUP_EXIT_H_
