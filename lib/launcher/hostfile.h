// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// `dt-wire --hostfile`: DeepSpeed's (and MPI's) hostfile for the job, in
// node order (= NODE_RANK order), from the Slurm environment (docs/compat.md).

#ifndef DIST_TRAIN_LIB_LAUNCHER_HOSTFILE_H_
#define DIST_TRAIN_LIB_LAUNCHER_HOSTFILE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "base/env.h"
#include "dist_train/status.h"

namespace dist_train {

// "host slots=N" per node of SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST.
// N: `slots` when given (the nproc word), else SLURM_GPUS_ON_NODE, else the
// node's tasks (SLURM_STEP_TASKS_PER_NODE, else SLURM_TASKS_PER_NODE), else
// 1. Errors name the variable.
Status DeepSpeedHostfile(const EnvMap& env, std::optional<uint32_t> slots,
                         std::string* out);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_LAUNCHER_HOSTFILE_H_
