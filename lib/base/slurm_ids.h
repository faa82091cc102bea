// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Slurm's special step ids (slurm.h: SLURM_BATCH_SCRIPT etc.) and reading
// them from the environment.

#ifndef DIST_TRAIN_LIB_BASE_SLURM_IDS_H_
#define DIST_TRAIN_LIB_BASE_SLURM_IDS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace dist_train {

constexpr uint32_t kExternStepId = 0xfffffffc;
constexpr uint32_t kBatchStepId = 0xfffffffb;
constexpr uint32_t kInteractiveStepId = 0xfffffffa;

// A SLURM_STEP_ID value: a step number, or one of the special ids, which
// Slurm 26.05 exports in the batch script as a negative number (-5: the
// batch script, -4 extern, -6 interactive). False for anything else.
bool ParseSlurmStepId(std::string_view text, uint32_t* step_id);

// The variable a step reads its share of the job from: the batch step sees
// the job's (SLURM_JOB_<what>), every other step its own (SLURM_STEP_<what>).
// JobOrStepVar(kBatchStepId, "NODELIST") == "SLURM_JOB_NODELIST".
std::string JobOrStepVar(uint32_t step_id, const char* what);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_SLURM_IDS_H_
