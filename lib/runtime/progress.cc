// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/progress.h"

#include "base/clock.h"

namespace dist_train {
namespace {

std::atomic<ProgressRecord*> g_record{nullptr};

// The end of a step: the counters as they are now. A sequence lock with
// sequentially consistent operations only (no fences: ThreadSanitizer does
// not model them); six such stores per step cost nothing next to a step.
void MarkStep(ProgressRecord* r, uint64_t steps, uint64_t now) {
  r->seq.fetch_add(1);  // odd: being written
  r->mark_ns.store(now);
  r->mark_steps.store(steps);
  r->mark_wait_ns.store(r->wait_ns.load(std::memory_order_relaxed));
  r->mark_compute_ns.store(r->compute_ns.load(std::memory_order_relaxed));
  r->seq.fetch_add(1);  // even: whole
}

}  // namespace

const char* CallKindName(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce:
      return "all_reduce";
    case CallKind::kBroadcast:
      return "broadcast";
    case CallKind::kAllGather:
      return "all_gather";
    case CallKind::kReduceScatter:
      return "reduce_scatter";
    case CallKind::kNone:
      break;
  }
  return "none";
}

ProgressSnapshot Snapshot(const ProgressRecord& r) {
  ProgressSnapshot s;
  s.collectives = r.collectives.load(std::memory_order_relaxed);
  s.heartbeats = r.heartbeats.load(std::memory_order_relaxed);
  s.inside = r.inside.load(std::memory_order_relaxed) != 0;
  uint32_t call = r.call.load(std::memory_order_relaxed);
  s.call = call <= static_cast<uint32_t>(CallKind::kReduceScatter)
               ? static_cast<CallKind>(call)
               : CallKind::kNone;
  return s;
}

TimingSample SampleTiming(const ProgressRecord& r) {
  TimingSample t;
  for (int tries = 0; tries < 100; ++tries) {  // a writer is never long
    uint32_t before = r.seq.load();
    if (before % 2 != 0) continue;
    t.now_ns = r.mark_ns.load();
    t.steps = r.mark_steps.load();
    t.wait_ns = r.mark_wait_ns.load();
    t.compute_ns = r.mark_compute_ns.load();
    if (r.seq.load() == before) return t;
  }
  return TimingSample{};  // torn every time: no sample (no window) now
}

void SetProgressRecord(ProgressRecord* record) {
  g_record.store(record, std::memory_order_release);
}

void NoteCollectiveBegin(CallKind kind) {
  ProgressRecord* r = g_record.load(std::memory_order_acquire);
  if (r == nullptr) return;
  r->call.store(static_cast<uint32_t>(kind), std::memory_order_relaxed);
  r->began_ns.store(MonotonicNanos(), std::memory_order_relaxed);
  r->inside.store(1, std::memory_order_relaxed);
  r->collectives.fetch_add(1, std::memory_order_relaxed);
}

void NoteCollectiveEnd() {
  ProgressRecord* r = g_record.load(std::memory_order_acquire);
  if (r == nullptr) return;
  uint64_t now = MonotonicNanos();
  uint64_t began = r->began_ns.load(std::memory_order_relaxed);
  r->inside.store(0, std::memory_order_relaxed);
  r->wait_ns.fetch_add(now > began ? now - began : 0,
                       std::memory_order_relaxed);
  if (r->heartbeats.load(std::memory_order_relaxed) == 0)  // steps: collectives
    MarkStep(r, r->collectives.load(std::memory_order_relaxed), now);
}

void NoteHeartbeat() {
  ProgressRecord* r = g_record.load(std::memory_order_acquire);
  if (r == nullptr) return;
  uint64_t beats = r->heartbeats.fetch_add(1, std::memory_order_relaxed) + 1;
  MarkStep(r, beats, MonotonicNanos());
}

void NoteComputeTime(uint64_t ns) {
  ProgressRecord* r = g_record.load(std::memory_order_acquire);
  if (r != nullptr) r->compute_ns.fetch_add(ns, std::memory_order_relaxed);
}

}  // namespace dist_train
