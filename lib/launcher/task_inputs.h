// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// What the SPANK plugin asks slurmstepd for (spank_get_item), read instead
// from the environment Slurm gives every task of an srun step: dt-wire, the
// plugin's contract and binding in user space, on clusters without the
// plugin (docs/user-guide.md, "Without the plugin"). Pure: EnvMap in.

#ifndef DIST_TRAIN_LIB_LAUNCHER_TASK_INPUTS_H_
#define DIST_TRAIN_LIB_LAUNCHER_TASK_INPUTS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "binding/binding.h"
#include "contract/contract.h"
#include "contract/step_layout.h"
#include "dist_train/status.h"

namespace dist_train {

// The items of one task, item by item:
//   S_JOB_ID SLURM_JOB_ID, S_JOB_STEPID SLURM_STEP_ID,
//   S_JOB_NNODES SLURM_STEP_NUM_NODES, S_JOB_NODEID SLURM_NODEID,
//   S_JOB_LOCAL_TASK_COUNT SLURM_STEP_TASKS_PER_NODE at the node's position,
//   S_JOB_TOTAL_TASK_COUNT SLURM_STEP_NUM_TASKS, S_TASK_ID SLURM_LOCALID,
//   S_TASK_GLOBAL_ID SLURM_PROCID,
//   S_STEP_CPUS_PER_TASK SLURM_CPUS_PER_TASK (Slurm's default 1 when unset).
// in->env gets the whole environment. Errors name the variable; a batch or
// interactive step (no SLURM_STEP_ID, or not a numbered step) is an error
// that names srun.
Status TaskInputsFromEnv(const EnvMap& env, SlurmInputs* in);

// The global rank of each local task, from SLURM_GTIDS ("4,5,6,7"):
// exactly `local_tasks` distinct ranks below `total_tasks`.
Status LocalGlobalRanks(const EnvMap& env, uint32_t local_tasks,
                        uint32_t total_tasks, std::vector<uint32_t>* ranks);

// The binding request of this node's tasks, as the plugin makes it from its
// items: SLURM_STEP_GPUS (GPUs Slurm gave the step), SLURM_GPUS_PER_TASK.
// The step's CPUs stay unset: the live topology holds only the PUs this
// task may use, i.e. the step's (its cgroup's) CPUs.
Status BindRequestFromEnv(const EnvMap& env, uint32_t local_tasks,
                          const BindParts& parts, BindRequest* req);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_LAUNCHER_TASK_INPUTS_H_
