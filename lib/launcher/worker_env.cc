// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/worker_env.h"

#include "base/parse.h"
#include "contract/torchrun_vars.h"

namespace dist_train {
namespace {

// Reads `name`, or else torchrun's PET_ form of it (what node mode sets).
Status Int(const EnvMap& env, const std::string& name, uint64_t min,
           uint64_t max, bool required, int* out) {
  for (const std::string& n : {name, kPetPrefix + name}) {
    auto it = env.find(n);
    if (it == env.end()) continue;
    uint64_t v = 0;
    if (!ParseUint(it->second, min, max, &v)) {
      return Status::InvalidArgument(
          n + "='" + it->second + "' is not an integer from " +
          std::to_string(min) + " to " + std::to_string(max));
    }
    *out = static_cast<int>(v);
    return Status::OK();
  }
  if (!required) return Status::OK();
  return Status::NotFound(name +
                          " is not set: run dt-run under srun "
                          "--dist-train=mode=node, or use --standalone");
}

}  // namespace

Status NodeContractFromEnv(const EnvMap& env, int nproc, NodeContract* out) {
  NodeContract c;
  auto addr = env.find("MASTER_ADDR");
  if (addr == env.end())
    addr = env.find(std::string(kPetPrefix) + "MASTER_ADDR");
  if (addr == env.end()) {
    return Status::NotFound(
        "MASTER_ADDR is not set: run dt-run under srun --dist-train=mode=node, "
        "or use --standalone");
  }
  c.master_addr = addr->second;
  DT_RETURN_IF_ERROR(Int(env, "MASTER_PORT", 1, 65535, true, &c.master_port));
  DT_RETURN_IF_ERROR(Int(env, "NNODES", 1, 1 << 20, true, &c.nnodes));
  DT_RETURN_IF_ERROR(
      Int(env, "NODE_RANK", 0, (1 << 20) - 1, true, &c.node_rank));
  if (c.node_rank >= c.nnodes) {
    return Status::InvalidArgument(
        "NODE_RANK=" + std::to_string(c.node_rank) +
        " is not below NNODES=" + std::to_string(c.nnodes));
  }
  c.nproc = 1;
  DT_RETURN_IF_ERROR(Int(env, "NPROC_PER_NODE", 1, 4096, false, &c.nproc));
  if (nproc > 0) c.nproc = nproc;
  *out = c;
  return Status::OK();
}

EnvAssignments WorkerEnv(const NodeContract& node, int local_rank,
                         int restart) {
  TorchrunPlace p;
  p.master_addr = node.master_addr;
  p.master_port = static_cast<uint32_t>(node.master_port);
  p.nnodes = static_cast<uint32_t>(node.nnodes);
  p.node_rank = static_cast<uint32_t>(node.node_rank);
  p.world_size = static_cast<uint32_t>(node.nnodes * node.nproc);
  p.rank = static_cast<uint32_t>(node.node_rank * node.nproc + local_rank);
  p.local_world_size = static_cast<uint32_t>(node.nproc);
  p.local_rank = static_cast<uint32_t>(local_rank);
  // The same variables as the plugin's task mode, plus how many times
  // dt-run has restarted the local group.
  EnvAssignments env = TorchrunEnv(TorchrunWorkerVars(), p);
  env.emplace_back("DT_RESTART_COUNT", std::to_string(restart));
  return env;
}

}  // namespace dist_train
