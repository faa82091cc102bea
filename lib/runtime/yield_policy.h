// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// When a shared-memory barrier waiter on an oversubscribed machine (more
// local ranks than CPUs) yields its CPU, and when it sleeps on the futex
// instead.
//
// A yield hands the CPU to a sibling rank on the same CPU at once: 4 ranks
// on 2 idle CPUs, a Python loop of barrier + 4-byte all-reduce, 20 us per
// call, against 32 us sleeping (an idle CPU's wake-up costs 15-40 us on
// this VM). But a yield also moves
// the yielder's scheduler deadline back by a whole slice (EEVDF), so beside
// a busy process a few yields hand that process the CPU, and it keeps it
// until the next timer tick: nothing wakes up to preempt it, since every
// waiting rank is still runnable. A sleeper's wake-up does preempt it (15
// us). Beside a busy loop per CPU, 4 bytes took 3.4-4 ms per call yielding
// (one tick at HZ=250) and 25-29 us sleeping.
//
// So the waiter yields until yields start losing the CPU for long (over
// kLongYield): after one such yield it sleeps for the rest of that wait;
// after two within kLongYieldsApart it sleeps in every wait for a
// backoff period, first kFirstBackoff, doubled (up to kMaxBackoff) each
// time a long yield follows the end of one within kLongYieldsApart. A
// lone long yield now and then (a niced background job, a sibling rank at
// a long reduction) does not start a backoff.
#ifndef DIST_TRAIN_RUNTIME_YIELD_POLICY_H_
#define DIST_TRAIN_RUNTIME_YIELD_POLICY_H_

#include <chrono>
#include <cstdint>

#include "runtime/wire.h"  // Clock

namespace dist_train {

class YieldPolicy {
 public:
  static constexpr std::chrono::microseconds kLongYield{500};
  static constexpr std::chrono::milliseconds kLongYieldsApart{50};
  static constexpr std::chrono::milliseconds kFirstBackoff{20};
  static constexpr std::chrono::milliseconds kMaxBackoff{1600};
  // Yields per wait at most, before sleeping anyway.
  static constexpr uint64_t kMaxYields = 64;

  // A barrier wait begins.
  void StartWait() {
    yields_ = 0;
    long_in_wait_ = false;
  }
  // Whether the waiter should yield now (else sleep).
  bool MayYield(Clock::time_point now) const {
    return !long_in_wait_ && yields_ < kMaxYields && now >= backoff_until_;
  }
  // A yield lasted from `before` to `after`.
  void Yielded(Clock::time_point before, Clock::time_point after);

  // The end of the current (or last) backoff; the epoch if none yet.
  Clock::time_point backoff_until() const { return backoff_until_; }

 private:
  uint64_t yields_ = 0;
  bool long_in_wait_ = false;
  Clock::time_point backoff_until_{};
  Clock::time_point last_long_{};  // the end of the last long yield
  Clock::duration backoff_{};      // the last backoff's length
};

// How long a barrier waiter sleeps on the futex before it looks at its
// control connection for failure notices: 10 ms, doubled each time the
// same wait goes on, up to 1 ms per local rank per CPU (at most 1 s), so
// the sleepers of one machine wake ~1,000 times a second in all however
// many they are. Every 10 ms, 1,023 ranks waiting on 2 CPUs woke 100,000
// times a second and took the CPUs from the ranks they waited for (the
// first all-reduce of 1,024 ranks: 0.3-1.4 s). A sleeper wakes at once
// when the barrier completes; only a failure notice can wait this long.
class NapSchedule {
 public:
  static constexpr std::chrono::milliseconds kFirst{10};
  static constexpr std::chrono::milliseconds kMost{1000};
  NapSchedule(int local_ranks, long cpus);
  // The next nap of this wait.
  std::chrono::milliseconds Next();
  void StartWait() { next_ = kFirst; }
  std::chrono::milliseconds limit() const { return limit_; }

 private:
  std::chrono::milliseconds limit_;
  std::chrono::milliseconds next_ = kFirst;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_RUNTIME_YIELD_POLICY_H_
