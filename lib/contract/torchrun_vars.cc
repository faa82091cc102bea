// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/torchrun_vars.h"

namespace dist_train {
namespace {

// One value getter per field keeps the tables one line per variable.
template <uint32_t TorchrunPlace::*field>
std::string Number(const TorchrunPlace& p) {
  return std::to_string(p.*field);
}

std::string MasterAddr(const TorchrunPlace& p) { return p.master_addr; }

}  // namespace

const std::vector<TorchrunVar>& TorchrunWorkerVars() {
  // Node rank twice: NODE_RANK for torch.distributed users, GROUP_RANK for
  // torchrun's own name of it; one role ("default") spanning every worker.
  static const std::vector<TorchrunVar> vars = {
      {"MASTER_ADDR", MasterAddr},
      {"MASTER_PORT", Number<&TorchrunPlace::master_port>},
      {"WORLD_SIZE", Number<&TorchrunPlace::world_size>},
      {"RANK", Number<&TorchrunPlace::rank>},
      {"LOCAL_RANK", Number<&TorchrunPlace::local_rank>},
      {"LOCAL_WORLD_SIZE", Number<&TorchrunPlace::local_world_size>},
      {"NODE_RANK", Number<&TorchrunPlace::node_rank>},
      {"GROUP_RANK", Number<&TorchrunPlace::node_rank>},
      {"GROUP_WORLD_SIZE", Number<&TorchrunPlace::nnodes>},
      {"ROLE_NAME",
       [](const TorchrunPlace&) { return std::string("default"); }},
      {"ROLE_RANK", Number<&TorchrunPlace::rank>},
      {"ROLE_WORLD_SIZE", Number<&TorchrunPlace::world_size>},
  };
  return vars;
}

const std::vector<TorchrunVar>& TorchrunLauncherVars() {
  static const std::vector<TorchrunVar> vars = {
      {"MASTER_ADDR", MasterAddr},
      {"MASTER_PORT", Number<&TorchrunPlace::master_port>},
      {"NNODES", Number<&TorchrunPlace::nnodes>},
      {"NODE_RANK", Number<&TorchrunPlace::node_rank>},
      {"NPROC_PER_NODE", Number<&TorchrunPlace::nproc_per_node>},
  };
  return vars;
}

EnvAssignments TorchrunEnv(const std::vector<TorchrunVar>& vars,
                           const TorchrunPlace& place) {
  EnvAssignments out;
  for (const TorchrunVar& v : vars) out.emplace_back(v.name, v.value(place));
  return out;
}

std::vector<std::string> TorchrunVarNames(
    const std::vector<TorchrunVar>& vars) {
  std::vector<std::string> out;
  for (const TorchrunVar& v : vars) out.emplace_back(v.name);
  return out;
}

}  // namespace dist_train
