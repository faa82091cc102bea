// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/spin_policy.h"

namespace dist_train {

void SpinPolicy::Record(bool while_spinning) {
  missed_ =
      ((missed_ << 1) | (while_spinning ? 0u : 1u)) & ((1u << kWindow) - 1);
  short_ = __builtin_popcount(missed_) >= kMissesToShorten;
}

}  // namespace dist_train
