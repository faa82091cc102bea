// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Slurm node lists ("node[01-04,7],gpu3"), expanded by libslurm's own
// slurm_hostlist_* functions. Inside srun/sbatch/slurmstepd those symbols
// come from the host process; tools and tests link -lslurm.

#ifndef DIST_TRAIN_LIB_HOSTLIST_H_
#define DIST_TRAIN_LIB_HOSTLIST_H_

#include <string>
#include <string_view>

#include "dist_train/status.h"

namespace dist_train {

// The first host of `nodelist` and the number of hosts. `what` names the
// source (e.g. "SLURM_STEP_NODELIST") for the error message.
Status FirstHost(std::string_view nodelist, const char* what,
                 std::string* first, int* count);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_HOSTLIST_H_
