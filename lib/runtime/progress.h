// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// This process's progress, as its hang watchdog (runtime/watchdog.h)
// reads it: how many collectives it started, whether it is inside one and
// which, and how many heartbeats it gave. The record lives in a shared
// page the watchdog process maps too; with no watchdog there is none and
// each note is one load and a branch.
//
// Thread-safety: notes are relaxed atomic stores; a watchdog only needs
// to see that something changed.

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

// Where notes go (nullptr: nowhere). Set once, by StartWatchdog.
void SetProgressRecord(ProgressRecord* record);

void NoteCollectiveBegin(CallKind kind);
void NoteCollectiveEnd();
void NoteHeartbeat();

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
