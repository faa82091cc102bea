// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/progress.h"

namespace dist_train {
namespace {

std::atomic<ProgressRecord*> g_record{nullptr};

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

void SetProgressRecord(ProgressRecord* record) {
  g_record.store(record, std::memory_order_release);
}

void NoteCollectiveBegin(CallKind kind) {
  ProgressRecord* r = g_record.load(std::memory_order_acquire);
  if (r == nullptr) return;
  r->call.store(static_cast<uint32_t>(kind), std::memory_order_relaxed);
  r->inside.store(1, std::memory_order_relaxed);
  r->collectives.fetch_add(1, std::memory_order_relaxed);
}

void NoteCollectiveEnd() {
  ProgressRecord* r = g_record.load(std::memory_order_acquire);
  if (r != nullptr) r->inside.store(0, std::memory_order_relaxed);
}

void NoteHeartbeat() {
  ProgressRecord* r = g_record.load(std::memory_order_acquire);
  if (r != nullptr) r->heartbeats.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace dist_train
