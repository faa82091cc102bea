// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The per-worker contract a per-node launcher (dt-run) gives each of its
// workers (pure): the same variables as the plugin's task mode.

#ifndef DIST_TRAIN_LIB_LAUNCHER_WORKER_ENV_H_
#define DIST_TRAIN_LIB_LAUNCHER_WORKER_ENV_H_

#include <string>

#include "contract/env_record.h"
#include "dist_train/status.h"

namespace dist_train {

// What the launcher knows about its node (from mode=node's variables, or
// made up by --standalone).
struct NodeContract {
  std::string master_addr;
  int master_port = 0;
  int nnodes = 1;
  int node_rank = 0;
  int nproc = 1;  // workers on this node
};

// Reads NNODES/NODE_RANK/MASTER_ADDR/MASTER_PORT (or their PET_* forms).
// `nproc` > 0 overrides NPROC_PER_NODE.
Status NodeContractFromEnv(const EnvMap& env, int nproc, NodeContract* out);

// The variables of local worker `local_rank`.
EnvAssignments WorkerEnv(const NodeContract& node, int local_rank, int restart);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_LAUNCHER_WORKER_ENV_H_
