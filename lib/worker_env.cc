// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "worker_env.h"

#include "parse.h"

namespace dist_train {
namespace {

Status Int(const EnvMap& env, const char* name, const char* pet, uint64_t min,
           uint64_t max, bool required, int* out) {
  for (const char* n : {name, pet}) {
    auto it = env.find(n);
    if (it == env.end()) continue;
    uint64_t v = 0;
    if (!ParseUint(it->second, min, max, &v)) {
      return Status::InvalidArgument(
          std::string(n) + "='" + it->second + "' is not an integer from " +
          std::to_string(min) + " to " + std::to_string(max));
    }
    *out = static_cast<int>(v);
    return Status::OK();
  }
  if (!required) return Status::OK();
  return Status::NotFound(std::string(name) +
                          " is not set: run dt-run under srun "
                          "--dist-train=mode=node, or use --standalone");
}

}  // namespace

Status NodeContractFromEnv(const EnvMap& env, int nproc, NodeContract* out) {
  NodeContract c;
  auto addr = env.find("MASTER_ADDR");
  if (addr == env.end()) addr = env.find("PET_MASTER_ADDR");
  if (addr == env.end()) {
    return Status::NotFound(
        "MASTER_ADDR is not set: run dt-run under srun --dist-train=mode=node, "
        "or use --standalone");
  }
  c.master_addr = addr->second;
  DT_RETURN_IF_ERROR(Int(env, "MASTER_PORT", "PET_MASTER_PORT", 1, 65535, true,
                         &c.master_port));
  DT_RETURN_IF_ERROR(
      Int(env, "NNODES", "PET_NNODES", 1, 1 << 20, true, &c.nnodes));
  DT_RETURN_IF_ERROR(Int(env, "NODE_RANK", "PET_NODE_RANK", 0, (1 << 20) - 1,
                         true, &c.node_rank));
  if (c.node_rank >= c.nnodes) {
    return Status::InvalidArgument(
        "NODE_RANK=" + std::to_string(c.node_rank) +
        " is not below NNODES=" + std::to_string(c.nnodes));
  }
  c.nproc = 1;
  DT_RETURN_IF_ERROR(Int(env, "NPROC_PER_NODE", "PET_NPROC_PER_NODE", 1, 4096,
                         false, &c.nproc));
  if (nproc > 0) c.nproc = nproc;
  *out = c;
  return Status::OK();
}

EnvAssignments WorkerEnv(const NodeContract& node, int local_rank,
                         int restart) {
  std::string rank = std::to_string(node.node_rank * node.nproc + local_rank);
  std::string world = std::to_string(node.nnodes * node.nproc);
  return {{"MASTER_ADDR", node.master_addr},
          {"MASTER_PORT", std::to_string(node.master_port)},
          {"WORLD_SIZE", world},
          {"RANK", rank},
          {"LOCAL_RANK", std::to_string(local_rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(node.nproc)},
          {"NODE_RANK", std::to_string(node.node_rank)},
          {"GROUP_RANK", std::to_string(node.node_rank)},
          {"GROUP_WORLD_SIZE", std::to_string(node.nnodes)},
          {"ROLE_NAME", "default"},
          {"ROLE_RANK", rank},
          {"ROLE_WORLD_SIZE", world},
          {"DT_RESTART_COUNT", std::to_string(restart)}};
}

}  // namespace dist_train
