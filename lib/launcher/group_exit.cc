// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/group_exit.h"

#include "dist_train/preemption.h"

namespace dist_train {

bool IsFailureCode(int code) { return code != 0 && code != kPreemptedExitCode; }

GroupOutcome SummarizeGroup(const std::vector<int>& codes, bool warned) {
  GroupOutcome out;
  for (int code : codes) {
    if (IsFailureCode(code)) {
      out.exit_code = code;
      out.preempted = false;
      out.restartable = !warned;
      return out;
    }
    if (code == kPreemptedExitCode) out.preempted = true;
  }
  if (out.preempted) out.exit_code = kPreemptedExitCode;
  return out;
}

}  // namespace dist_train
