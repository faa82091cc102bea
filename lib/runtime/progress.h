// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// This process's progress, as its hang watchdog (runtime/watchdog.h)
// reads it: how many collectives it started, whether it is inside one and
// which, and how many heartbeats it gave. The record lives in a shared
// page the watchdog process maps too; with no watchdog there is none and
// each note is one load and a branch.
//
// It also times the steps, for the straggler report: the time spent inside
// collectives (waiting for the others, mostly) and compute time a caller
// measured itself (the Python package's forward-pass hook). Two clock
// reads per collective; nothing else per step.
//
// Thread-safety: notes are relaxed atomic stores; a watchdog only needs
// to see that something changed. The step-end counters are written under
// a sequence counter, so a sample never mixes two steps (heartbeats from
// two threads at once can spoil one sample, which is then skipped).

#ifndef DIST_TRAIN_LIB_RUNTIME_PROGRESS_H_
#define DIST_TRAIN_LIB_RUNTIME_PROGRESS_H_

#include <atomic>
#include <cstdint>

namespace dist_train {

enum class CallKind : uint32_t {
  kNone = 0,
  kAllReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
};
const char* CallKindName(CallKind kind);  // "all_reduce", ...

struct ProgressRecord {
  std::atomic<uint64_t> collectives{0};  // started, in all
  std::atomic<uint64_t> heartbeats{0};
  std::atomic<uint32_t> inside{0};  // 1 while in a collective
  std::atomic<uint32_t> call{0};    // the CallKind of the last one started
  // Monotonic nanoseconds (base/clock.h's clock).
  std::atomic<uint64_t> wait_ns{0};     // inside finished collectives, in all
  std::atomic<uint64_t> began_ns{0};    // when the current collective began
  std::atomic<uint64_t> compute_ns{0};  // NoteComputeTime's, in all
  // The counters at the last step's end (a heartbeat; without heartbeats,
  // a collective's end), so a window holds whole steps. Written under
  // `seq` (odd while written), read by SampleTiming.
  std::atomic<uint32_t> seq{0};
  std::atomic<uint64_t> mark_ns{0};
  std::atomic<uint64_t> mark_steps{0};
  std::atomic<uint64_t> mark_wait_ns{0};
  std::atomic<uint64_t> mark_compute_ns{0};
};

// A copy of the record at one moment; equal copies: no progress between.
struct ProgressSnapshot {
  uint64_t collectives = 0;
  uint64_t heartbeats = 0;
  bool inside = false;
  CallKind call = CallKind::kNone;
  bool operator==(const ProgressSnapshot& o) const {
    return collectives == o.collectives && heartbeats == o.heartbeats &&
           inside == o.inside && call == o.call;
  }
  bool operator!=(const ProgressSnapshot& o) const { return !(*this == o); }
};
ProgressSnapshot Snapshot(const ProgressRecord& record);

// The timing counters at the end of the last step, for the straggler
// report (runtime/step_stats.h): `steps` counts heartbeats, or collectives
// when the program gives no heartbeats. All zero before the first step.
struct TimingSample {
  uint64_t now_ns = 0;  // when that step ended
  uint64_t steps = 0;
  uint64_t wait_ns = 0;
  uint64_t compute_ns = 0;
};
TimingSample SampleTiming(const ProgressRecord& record);

// Where notes go (nullptr: nowhere). Set once, by StartWatchdog.
void SetProgressRecord(ProgressRecord* record);

void NoteCollectiveBegin(CallKind kind);
void NoteCollectiveEnd();
void NoteHeartbeat();
// Adds compute time the caller measured (e.g. a forward pass); once a
// program gives any, the straggler report uses it instead of "time outside
// collectives".
void NoteComputeTime(uint64_t ns);

// Begin in the constructor, end in the destructor.
class CollectiveNote {
 public:
  explicit CollectiveNote(CallKind kind) { NoteCollectiveBegin(kind); }
  ~CollectiveNote() { NoteCollectiveEnd(); }
  CollectiveNote(const CollectiveNote&) = delete;
  CollectiveNote& operator=(const CollectiveNote&) = delete;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_PROGRESS_H_
