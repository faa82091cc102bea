// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/yield_policy.h"

#include <algorithm>

namespace dist_train {

void YieldPolicy::Yielded(Clock::time_point before, Clock::time_point after) {
  ++yields_;
  if (after - before <= kLongYield) return;
  long_in_wait_ = true;
  const bool had_backoff = backoff_ != Clock::duration::zero();
  // The first long yield after a backoff, soon after its end: the CPU is
  // still contended, back off longer.
  const bool probe_failed = had_backoff && before >= backoff_until_ &&
                            before - backoff_until_ <= kLongYieldsApart &&
                            last_long_ < backoff_until_;
  const bool repeated = last_long_ != Clock::time_point{} &&
                        before - last_long_ <= kLongYieldsApart;
  last_long_ = after;
  if (probe_failed) {
    backoff_ = std::min<Clock::duration>(backoff_ * 2, kMaxBackoff);
  } else if (repeated) {
    backoff_ = kFirstBackoff;
  } else {
    return;
  }
  backoff_until_ = after + backoff_;
}

NapSchedule::NapSchedule(int local_ranks, long cpus) {
  const long per_cpu = local_ranks / std::max(1L, cpus);
  limit_ = std::clamp<std::chrono::milliseconds>(
      std::chrono::milliseconds(per_cpu), kFirst, kMost);
}

std::chrono::milliseconds NapSchedule::Next() {
  std::chrono::milliseconds nap = next_;
  next_ = std::min(next_ * 2, limit_);
  return nap;
}

}  // namespace dist_train
