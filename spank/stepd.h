// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// slurmstepd side (remote context): gathers Slurm's view of each task,
// asks the pure contract (lib/contract.h) for the plan, applies it.

#ifndef DIST_TRAIN_SPANK_STEPD_H_
#define DIST_TRAIN_SPANK_STEPD_H_

#include "spank_api.h"

namespace dist_train {

// Once per step per node, before any task forks. Never fails (a failure
// here would drain the node for batch steps); errors are deferred.
int StepdUserInit(spank_t sp);

// Once per task, in the task's process just before exec, as the user.
// A non-zero return fails the task (it does not drain the node).
int StepdTaskInit(spank_t sp);

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_STEPD_H_
