// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Environment names a gen-sbatch config may not set, through `env:` or as a
// sweep parameter: those dist-train's plugin exports for every step (a value
// in the script would override the plugin's: a fixed MASTER_PORT, a stale
// RANK), dist-train's own DT_* (DT_JOB_TOKEN is the job's secret: written
// into the script it would be stored with the job), Slurm's SLURM_* and the
// generated script's own dt_* variables. docs/gen-sbatch.md lists them.

#ifndef DIST_TRAIN_LIB_JOBGEN_RESERVED_VARS_H_
#define DIST_TRAIN_LIB_JOBGEN_RESERVED_VARS_H_

#include <string>

namespace dist_train {

// "" when a config may set `name`, else why not ("dist-train's plugin sets
// it for every step"), to follow "'NAME' is reserved: ".
std::string ReservedVarReason(const std::string& name);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_RESERVED_VARS_H_
