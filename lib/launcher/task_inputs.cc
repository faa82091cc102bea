// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/task_inputs.h"

#include <algorithm>
#include <optional>
#include <string>

#include "base/env.h"
#include "base/parse.h"
#include "base/slurm_ids.h"

namespace dist_train {
namespace {

// A required count: set, and a decimal integer.
Status RequiredCount(const EnvMap& env, const char* name, uint32_t* out) {
  std::optional<uint64_t> n;
  DT_RETURN_IF_ERROR(EnvCount(env, name, &n));
  if (!n) {
    return Status::NotFound(std::string(name) +
                            " is not set: dt-wire runs as an srun task "
                            "(srun dt-wire -- PROGRAM ...)");
  }
  *out = static_cast<uint32_t>(*n);
  return Status::OK();
}

// Slurm's special step ids (batch, extern, interactive, pending, ...) are
// 0xfffffff0 and up.
constexpr uint32_t kFirstSpecialStepId = 0xfffffff0;

constexpr char kNotInBatch[] =
    ": dt-wire runs as an srun task, not in the batch script (srun dt-wire "
    "-- PROGRAM ...)";

Status StepId(const EnvMap& env, uint32_t* step_id) {
  const std::string* text = EnvFind(env, "SLURM_STEP_ID");
  if (text == nullptr)
    return Status::NotFound(std::string("SLURM_STEP_ID is not set") +
                            kNotInBatch);
  if (!ParseSlurmStepId(*text, step_id)) {
    return Status::InvalidArgument("SLURM_STEP_ID='" + ShownValue(*text) +
                                   "' is not a step id");
  }
  if (*step_id >= kFirstSpecialStepId) {  // batch, extern, interactive, ...
    return Status::InvalidArgument("SLURM_STEP_ID=" + *text +
                                   " is not an srun step" + kNotInBatch);
  }
  return Status::OK();
}

}  // namespace

Status TaskInputsFromEnv(const EnvMap& env, SlurmInputs* in) {
  SlurmInputs r;
  DT_RETURN_IF_ERROR(RequiredCount(env, "SLURM_JOB_ID", &r.job_id));
  DT_RETURN_IF_ERROR(StepId(env, &r.step_id));
  DT_RETURN_IF_ERROR(
      RequiredCount(env, "SLURM_STEP_NUM_NODES", &r.step_nnodes));
  DT_RETURN_IF_ERROR(RequiredCount(env, "SLURM_NODEID", &r.node_id));
  DT_RETURN_IF_ERROR(
      RequiredCount(env, "SLURM_STEP_NUM_TASKS", &r.total_tasks));
  DT_RETURN_IF_ERROR(RequiredCount(env, "SLURM_LOCALID", &r.local_task_id));
  DT_RETURN_IF_ERROR(RequiredCount(env, "SLURM_PROCID", &r.global_task_id));
  const std::string* per_node = EnvFind(env, "SLURM_STEP_TASKS_PER_NODE");
  if (per_node == nullptr) {
    return Status::NotFound("SLURM_STEP_TASKS_PER_NODE is not set");
  }
  DT_RETURN_IF_ERROR(TasksOnNode(*per_node, r.node_id,
                                 "SLURM_STEP_TASKS_PER_NODE", &r.local_tasks));
  std::optional<uint64_t> cpus;
  DT_RETURN_IF_ERROR(EnvUint(env, "SLURM_CPUS_PER_TASK", 1, UINT32_MAX, &cpus));
  r.cpus_per_task = static_cast<uint32_t>(cpus.value_or(1));
  r.env = env;
  *in = std::move(r);
  return Status::OK();
}

Status LocalGlobalRanks(const EnvMap& env, uint32_t local_tasks,
                        uint32_t total_tasks, std::vector<uint32_t>* ranks) {
  const std::string* text = EnvFind(env, "SLURM_GTIDS");
  if (text == nullptr) return Status::NotFound("SLURM_GTIDS is not set");
  std::vector<uint32_t> r;
  for (std::string_view part : Split(*text, ',')) {
    uint64_t n = 0;
    if (total_tasks == 0 || !ParseUint(part, 0, total_tasks - 1, &n)) {
      return Status::InvalidArgument("SLURM_GTIDS='" + ShownValue(*text) +
                                     "' is not a list of ranks below " +
                                     std::to_string(total_tasks));
    }
    r.push_back(static_cast<uint32_t>(n));
  }
  std::vector<uint32_t> sorted = r;
  std::sort(sorted.begin(), sorted.end());
  if (r.size() != local_tasks ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return Status::InvalidArgument("SLURM_GTIDS='" + ShownValue(*text) +
                                   "' is not " + std::to_string(local_tasks) +
                                   " distinct ranks");
  }
  *ranks = std::move(r);
  return Status::OK();
}

Status BindRequestFromEnv(const EnvMap& env, uint32_t local_tasks,
                          const BindParts& parts, BindRequest* req) {
  BindRequest r;
  r.ntasks = local_tasks;
  r.parts = parts;
  const std::string* gpus = EnvFind(env, "SLURM_STEP_GPUS");
  if (gpus != nullptr && !gpus->empty()) {
    std::vector<int> g;
    DT_RETURN_IF_ERROR(ParseIndexList(*gpus, "SLURM_STEP_GPUS", &g));
    r.gpus = std::move(g);
  }
  const std::string* per_task = EnvFind(env, "SLURM_GPUS_PER_TASK");
  if (per_task != nullptr && !per_task->empty()) {
    DT_RETURN_IF_ERROR(
        ParseGpusPerTask(*per_task, "SLURM_GPUS_PER_TASK", &r.gpus_per_task));
  }
  *req = std::move(r);
  return Status::OK();
}

}  // namespace dist_train
