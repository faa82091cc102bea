// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The watchdog's step timing (runtime/watchdog.h runs it in the watchdog
// process, every poll): the worker's compute time per step over windows
// of whole steps (runtime/step_stats.h), published as the rank's live
// record (rank-R.live in the step's watchdog directory, what dt-status
// shows); on rank 0, every rank's record read and stragglers named on the
// job's stderr and in stragglers.txt.

#ifndef DIST_TRAIN_LIB_RUNTIME_STEP_TIMER_H_
#define DIST_TRAIN_LIB_RUNTIME_STEP_TIMER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "runtime/progress.h"
#include "runtime/step_stats.h"
#include "runtime/watchdog.h"

namespace dist_train {

class StepTimer {
 public:
  // `dir_fd` is the step's directory (`step_dir` names it in errors).
  StepTimer(const WatchdogOptions& options, pid_t worker,
            const ProgressRecord* record, int dir_fd, std::string step_dir);

  // Closes a window when enough whole steps passed, and writes the live
  // record: `now` is the worker's progress, `idle` the seconds since it
  // changed, `ended` whether the worker exited.
  void Publish(const ProgressSnapshot& now, double idle, bool ended);

  // Rank 0: reads every rank's live record and prints what changed.
  void CheckStragglers();

 private:
  std::vector<LiveRecord> ReadLive() const;

  const WatchdogOptions options_;
  const ProgressRecord* record_;
  const int dir_fd_;
  const std::string step_dir_;
  TimingSample window_start_;
  LiveRecord live_;
  StragglerTracker tracker_;
};

// "rank-R.live".
std::string LiveRecordName(int rank);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_STEP_TIMER_H_
