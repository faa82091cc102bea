// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Which node each rank of a Slurm step runs on, from a rank's own
// environment: SLURM_STEP_NODELIST (through libslurm's hostlist), and
// SLURM_STEP_TASKS_PER_NODE ("2(x3),1") when every rank is a Slurm task,
// or LOCAL_WORLD_SIZE on every node for the workers of a per-node launcher
// (torchrun, dt-run: RANK set and not SLURM_PROCID, or WORLD_SIZE not
// SLURM_STEP_NUM_TASKS). Ranks are laid out in
// blocks (the default distribution, and the torchrun contract's: RANK =
// node's first rank + LOCAL_RANK); a step laid out otherwise (e.g.
// srun -m cyclic) is detected from the rank's own place (SLURM_PROCID,
// SLURM_NODEID, SLURM_LOCALID, or RANK, NODE_RANK, LOCAL_RANK) and
// refused, never guessed.

#ifndef DIST_TRAIN_LIB_CONTRACT_STEP_LAYOUT_H_
#define DIST_TRAIN_LIB_CONTRACT_STEP_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "dist_train/status.h"

namespace dist_train {

// Tasks on node `node_id` of a SLURM_STEP_TASKS_PER_NODE value such as
// "2(x3),1" (3 nodes with 2 tasks, then one with 1). `what` names the
// variable in errors.
Status TasksOnNode(std::string_view tasks_per_node, uint32_t node_id,
                   const char* what, uint32_t* count);

// Every node's task count, in node order, from such a value.
Status ExpandTasksPerNode(std::string_view tasks_per_node, const char* what,
                          std::vector<uint32_t>* counts);

struct StepLayout {
  std::vector<std::string> hosts;  // node order (= NODE_RANK order)
  std::vector<uint32_t> tasks;     // tasks on each of them
  // The host of `rank`; "" past the last rank.
  std::string HostOf(uint32_t rank) const;
};

// The layout of this task's step. Errors name the variable that is
// missing or wrong, or say that the ranks are not laid out in blocks.
Status ReadStepLayout(const EnvMap& env, StepLayout* layout);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_STEP_LAYOUT_H_
