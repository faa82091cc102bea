// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The hang watchdog's records and summary (pure). Each rank's watchdog
// writes its rank's record (key=value lines) beside its stack dump; rank
// 0's reads them all and writes one summary that names the ranks that did
// not progress, where they are and what they were doing:
//
//   dist-train: watchdog: no rank progressed for 30 s; 4 of 4 ranks
//   reported, stacks in /home/u/run/dist-train-watchdog-42.0
//   dist-train: watchdog: rank 3 on node4 (pid 811) did not progress:
//   stopped (SIGSTOP or a debugger), after all_reduce #120; the others are
//   inside all_reduce #121

#ifndef DIST_TRAIN_LIB_RUNTIME_HANG_REPORT_H_
#define DIST_TRAIN_LIB_RUNTIME_HANG_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/progress.h"

namespace dist_train {

struct HangRecord {
  int rank = -1;
  std::string host;
  int64_t pid = 0;
  char state = '?';  // /proc/PID/stat's: R running, S sleeping, T stopped...
  ProgressSnapshot progress;
  double idle_seconds = 0;  // since the rank last progressed
};

std::string EncodeHangRecord(const HangRecord& record);
// False for anything but what EncodeHangRecord writes (every key once,
// each value in range).
bool DecodeHangRecord(const std::string& text, HangRecord* record);

// The summary's lines (each "dist-train: watchdog: ..."). `records` in any
// order; ranks of 0..world_size-1 without one are named as missing.
std::string HangSummary(const std::vector<HangRecord>& records, int world_size,
                        double seconds, const std::string& dir);

// The hosts of the ranks the summary names (behind the others, or
// stopped), each once, for the requeue policy; none when every rank is
// named (all stuck in the same call: no node to blame).
std::vector<std::string> HungHosts(const std::vector<HangRecord>& records);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_HANG_REPORT_H_
