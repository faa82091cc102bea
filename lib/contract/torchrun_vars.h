// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The one list of torchrun's variables, in the order dist-train sets them:
// what each worker is told (the plugin's task mode, dt-run's workers) and
// what a per-node launcher reads (the plugin's node mode). Both writers take
// their names and values from here, so the two cannot drift apart.

#ifndef DIST_TRAIN_LIB_CONTRACT_TORCHRUN_VARS_H_
#define DIST_TRAIN_LIB_CONTRACT_TORCHRUN_VARS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/env.h"

namespace dist_train {

// Where a worker (or a node's launcher) stands in the job.
struct TorchrunPlace {
  std::string master_addr;
  uint32_t master_port = 0;
  uint32_t nnodes = 0, node_rank = 0;
  uint32_t world_size = 0, rank = 0;
  uint32_t local_world_size = 0, local_rank = 0;
  uint32_t nproc_per_node = 0;  // launcher variables only
};

struct TorchrunVar {
  const char* name;
  std::string (*value)(const TorchrunPlace& place);
};

// MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK, ... ROLE_WORLD_SIZE:
// what torchrun's elastic agent gives each worker.
const std::vector<TorchrunVar>& TorchrunWorkerVars();

// MASTER_ADDR, MASTER_PORT, NNODES, NODE_RANK, NPROC_PER_NODE: a launcher's
// arguments. torchrun also reads each as PET_<NAME>.
const std::vector<TorchrunVar>& TorchrunLauncherVars();
constexpr char kPetPrefix[] = "PET_";

// `vars` evaluated for `place`, in table order.
EnvAssignments TorchrunEnv(const std::vector<TorchrunVar>& vars,
                           const TorchrunPlace& place);

// The names of `vars`, in table order.
std::vector<std::string> TorchrunVarNames(const std::vector<TorchrunVar>& vars);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_TORCHRUN_VARS_H_
