// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// slurmstepd side (remote context): gathers Slurm's view of each task,
// asks the pure contract (lib/contract.h) for the plan, applies it.

#ifndef DIST_TRAIN_SPANK_STEPD_H_
#define DIST_TRAIN_SPANK_STEPD_H_

#include "spank_host.h"
#include "state.h"

namespace dist_train {

// Once per step per node, before any task forks. Never fails (a failure
// here would drain the node for batch steps); errors are deferred.
// Remote init_post_opt: still root, before slurmstepd drops privileges,
// the only remote hook where a libslurm RPC is safe. Takes srun's step facts
// or, where srun gave none (the batch step), looks them up itself.
int StepdInitPostOpt(SpankHost& host, PluginState& st);

int StepdUserInit(SpankHost& host, PluginState& st);

// Once per task, in the task's process just before exec, as the user.
// A non-zero return fails the task (it does not drain the node).
int StepdTaskInit(SpankHost& host, PluginState& st);

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_STEPD_H_
