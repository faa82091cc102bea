// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// How long a shared-memory barrier waiter with a CPU of its own (no more
// local ranks than CPUs) spins before it sleeps on the futex.
//
// Spinning pays when the ranks waited for run on other CPUs and arrive
// within the spin: 2 ranks, 4 bytes, 0.5 us spinning against tens of
// microseconds for a sleeper's wake-up. It costs when they need the CPU the
// spinner holds: a machine whose CPUs are not the job's alone (other jobs,
// or several nodes of the local cluster on one machine). 2 local-cluster
// nodes x 2 ranks on a 2-CPU machine, 4 bytes: 167-257 us per all-reduce
// spinning 100 us, 69-76 us not spinning. So a waiter spins kLongSpin
// while spinning mostly catches the barrier: once kMissesToShorten of the
// last kWindow long spins ran out before the barrier completed, it sleeps
// after a few looks instead, and every kProbeEvery-th wait spins kLongSpin
// again; it spins long again once fewer than kMissesToShorten of the last
// kWindow long spins missed. (Misses in a row would not do: the
// hierarchical all-reduce's barriers alternate, the local one caught, the
// one around the leaders' exchange missed.)
#ifndef DIST_TRAIN_RUNTIME_SPIN_POLICY_H_
#define DIST_TRAIN_RUNTIME_SPIN_POLICY_H_

#include <chrono>
#include <cstdint>

namespace dist_train {

class SpinPolicy {
 public:
  static constexpr std::chrono::microseconds kLongSpin{100};
  static constexpr int kWindow = 8;
  static constexpr int kMissesToShorten = 4;
  static constexpr int kProbeEvery = 64;

  // Whether this wait spins kLongSpin (else it sleeps after a few looks);
  // call once per wait, before WaitEnded. Inline, as WaitEnded's common
  // case: both run in every barrier, 0.13 us in all for 2 ranks at 4 B.
  bool SpinLong() {
    spun_long_ = !short_ || ++since_probe_ >= kProbeEvery;
    if (spun_long_) since_probe_ = 0;
    return spun_long_;
  }
  // The wait that SpinLong began ended; `while_spinning`: the barrier
  // completed before the waiter went to sleep.
  void WaitEnded(bool while_spinning) {
    if (!spun_long_) return;  // a short spin says nothing about a long one
    if (while_spinning && missed_ == 0) return;  // the common case, unchanged
    Record(while_spinning);
  }

  bool short_mode() const { return short_; }

 private:
  // A long spin's outcome into the window.
  void Record(bool while_spinning);

  bool short_ = false;
  bool spun_long_ = true;  // the current wait's choice
  uint32_t missed_ = 0;    // the last kWindow long spins, 1 = missed
  int since_probe_ = 0;    // short waits since the last probe
};

}  // namespace dist_train

#endif  // DIST_TRAIN_RUNTIME_SPIN_POLICY_H_
