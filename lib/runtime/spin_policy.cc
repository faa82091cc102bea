// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/spin_policy.h"

namespace dist_train {

bool SpinPolicy::SpinLong() {
  spun_long_ = !short_ || ++since_probe_ >= kProbeEvery;
  if (spun_long_) since_probe_ = 0;
  return spun_long_;
}

void SpinPolicy::WaitEnded(bool while_spinning) {
  if (!spun_long_) return;  // a short spin says nothing about a long one
  if (while_spinning && missed_ == 0) return;  // the common case, unchanged
  missed_ =
      ((missed_ << 1) | (while_spinning ? 0u : 1u)) & ((1u << kWindow) - 1);
  short_ = __builtin_popcount(missed_) >= kMissesToShorten;
}

}  // namespace dist_train
