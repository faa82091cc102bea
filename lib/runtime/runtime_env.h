// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Where a worker's rank, world size, master address and secret come from
// (pure): explicit Options first, then the dist-train / torchrun contract
// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), then plain Slurm
// (SLURM_PROCID, SLURM_STEP_NUM_TASKS, the step's first node and a port
// derived as the plugin does). Kubeflow v1's WORLD_SIZE counts pods, which
// is caught when a pod was meant to run several processes.

#ifndef DIST_TRAIN_LIB_RUNTIME_RUNTIME_ENV_H_
#define DIST_TRAIN_LIB_RUNTIME_RUNTIME_ENV_H_

#include "base/env.h"
#include "contract/env_record.h"
#include "dist_train/runtime.h"

namespace dist_train {

// Fills every unset field of `in` from `env` (base/env.h's strict reader;
// ProcessEnv() gives the process's own). Errors name the variable.
Status ResolveOptions(const Options& in, const EnvMap& env, Options* out);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_RUNTIME_ENV_H_
