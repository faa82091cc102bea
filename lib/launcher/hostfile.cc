// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/hostfile.h"

#include <vector>

#include "base/hostlist.h"
#include "launcher/task_inputs.h"

namespace dist_train {
namespace {

// Slots of node `node` when nproc is not given.
Status NodeSlots(const EnvMap& env, uint32_t node, uint32_t* slots) {
  std::optional<uint64_t> gpus;
  DT_RETURN_IF_ERROR(EnvUint(env, "SLURM_GPUS_ON_NODE", 1, 4096, &gpus));
  if (gpus) return *slots = static_cast<uint32_t>(*gpus), Status::OK();
  const char* var =
      EnvFirstSet(env, {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"});
  *slots = 1;
  if (var == nullptr) return Status::OK();
  return TasksOnNode(*EnvFind(env, var), node, var, slots);
}

}  // namespace

Status DeepSpeedHostfile(const EnvMap& env, std::optional<uint32_t> slots,
                         std::string* out) {
  const char* var =
      EnvFirstSet(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"});
  if (var == nullptr)
    return Status::NotFound(
        "SLURM_JOB_NODELIST is not set: --hostfile runs inside a Slurm job");
  std::vector<std::string> hosts;
  DT_RETURN_IF_ERROR(ExpandHosts(*EnvFind(env, var), var, &hosts));
  std::string text;
  for (uint32_t i = 0; i < hosts.size(); ++i) {
    uint32_t n = slots.value_or(0);
    if (!slots) DT_RETURN_IF_ERROR(NodeSlots(env, i, &n));
    text += hosts[i] + " slots=" + std::to_string(n) + "\n";
  }
  *out = std::move(text);
  return Status::OK();
}

}  // namespace dist_train
