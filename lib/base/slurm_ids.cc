// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/slurm_ids.h"

#include "base/parse.h"

namespace dist_train {

bool ParseSlurmStepId(std::string_view text, uint32_t* step_id) {
  uint64_t n = 0;
  if (!text.empty() && text[0] == '-') {
    // Two's complement of the special ids 0xfffffff0..0xffffffff.
    if (!ParseUint(text.substr(1), 1, 16, &n)) return false;
    *step_id = static_cast<uint32_t>(0x100000000ull - n);
    return true;
  }
  if (!ParseUint(text, 0, UINT32_MAX, &n)) return false;
  *step_id = static_cast<uint32_t>(n);
  return true;
}

std::string JobOrStepVar(uint32_t step_id, const char* what) {
  return std::string(step_id == kBatchStepId ? "SLURM_JOB_" : "SLURM_STEP_") +
         what;
}

}  // namespace dist_train
