// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Step timing and the straggler report (pure; docs/runtime.md,
// "Stragglers"). Each rank's watchdog (runtime/watchdog.h) measures its
// worker's compute time per step over windows of a few steps, from the
// worker's timing counters (runtime/progress.h): time outside collectives,
// or the compute time the program reported itself. It publishes a live
// record (rank-R.live in the step's watchdog directory) that dt-status
// shows, and rank 0's watchdog compares them: a rank whose compute per step
// is at least 10 % over the median of the other ranks for 3 windows in a
// row is named, with its host, on the job's stderr:
//
//   dist-train: straggler: rank 2 on node3 (pid 811): 24.1 ms of compute
//   per step, 20 % over the other ranks' median of 20.0 ms, 3 windows in a
//   row (at step 37)
//
// In synchronous training every rank takes the same wall time per step;
// the slow one is the one that waits least for the others.

#ifndef DIST_TRAIN_LIB_RUNTIME_STEP_STATS_H_
#define DIST_TRAIN_LIB_RUNTIME_STEP_STATS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/progress.h"

namespace dist_train {

// One window of steps, from two timing samples of one rank.
struct StepWindow {
  uint64_t steps = 0;
  double compute_ms = 0;  // per step
  double step_ms = 0;     // wall time per step
};

// The window from `a` to `b`; false while fewer than `min_steps` steps
// passed (the window stays open). Compute is the reported compute time
// when the program reported any in the window, else the wall time outside
// collectives.
bool MeasureWindow(const TimingSample& a, const TimingSample& b,
                   uint64_t min_steps, StepWindow* window);

// What a rank's watchdog publishes; written whole (temporary + rename).
struct LiveRecord {
  int rank = -1;
  std::string host;
  int64_t pid = 0;
  uint64_t steps = 0;  // heartbeats, or collectives without heartbeats
  uint64_t collectives = 0;
  uint64_t windows = 0;         // windows measured so far
  double compute_ms = -1;       // per step, the last window; < 0: none yet
  double step_ms = -1;          // wall per step, the last window
  double idle_seconds = 0;      // since the worker last progressed
  double watchdog_seconds = 0;  // the hang limit
  int64_t updated = 0;          // when written, Unix seconds
  bool ended = false;           // the worker exited
};

std::string EncodeLiveRecord(const LiveRecord& record);
// False for anything but what EncodeLiveRecord writes.
bool DecodeLiveRecord(const std::string& text, LiveRecord* record);

struct StragglerOptions {
  double percent = 10;  // over the other ranks' median compute per step
  double min_ms = 0.2;  // and at least this much over (timer noise)
  int windows = 3;      // in a row, to be named; as many to be cleared
};

// Rank 0's view: fed every rank's latest record, over and over; counts each
// rank's new windows (a record seen twice counts once).
class StragglerTracker {
 public:
  explicit StragglerTracker(StragglerOptions options = {});

  // Lines to print for ranks newly named or no longer slow ("dist-train:
  // straggler: ...\n" each); `records` in any order.
  std::string Update(const std::vector<LiveRecord>& records);

  // The ranks named now, and the lines that named them (stragglers.txt).
  std::set<int> named() const;
  std::string NamedText() const;

 private:
  struct RankState {
    uint64_t windows = 0;  // the record's count when last looked at
    int over = 0;          // consecutive windows over the bar
    int under = 0;         // consecutive windows under it, while named
  };
  StragglerOptions options_;
  std::map<int, RankState> state_;
  std::map<int, std::string> named_;  // rank: the line that named it
};

// The median of the compute per step of the ranks other than `rank` that
// measured one (< 0 when none did).
double OthersMedianMs(const std::vector<LiveRecord>& records, int rank);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_STEP_STATS_H_
