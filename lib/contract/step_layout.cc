// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/step_layout.h"

#include <optional>

#include "base/hostlist.h"
#include "base/parse.h"

namespace dist_train {
namespace {

// One "N" or "N(xK)" of a tasks-per-node list.
bool ParseRun(std::string_view part, uint64_t* tasks, uint64_t* repeat) {
  *repeat = 1;
  size_t open = part.find("(x");
  if (open != std::string_view::npos) {
    if (part.back() != ')') return false;
    std::string_view times = part.substr(open + 2, part.size() - open - 3);
    if (!ParseUint(times, 1, UINT32_MAX, repeat)) return false;
    part = part.substr(0, open);
  }
  return ParseUint(part, 0, UINT32_MAX, tasks);
}

Status NotAList(std::string_view value, const char* what) {
  return Status::InvalidArgument(std::string(what) + "='" + ShownValue(value) +
                                 "' is not a tasks-per-node list such as "
                                 "2(x3),1");
}

Status RequiredUint(const EnvMap& env, const char* name, uint64_t* out) {
  std::optional<uint64_t> n;
  DT_RETURN_IF_ERROR(EnvCount(env, name, &n));
  if (!n) return Status::NotFound(std::string(name) + " is not set");
  return *out = *n, Status::OK();
}

// The names of a rank's place: Slurm's task variables, or a per-node
// launcher's (torchrun, dt-run: its workers are not Slurm tasks).
struct PlaceVars {
  const char* rank;
  const char* node;
  const char* local;
};
constexpr PlaceVars kTaskVars = {"SLURM_PROCID", "SLURM_NODEID",
                                 "SLURM_LOCALID"};
constexpr PlaceVars kWorkerVars = {"RANK", "NODE_RANK", "LOCAL_RANK"};

// This process's own rank must be its node's first rank + its local one.
Status CheckBlocks(const EnvMap& env, const PlaceVars& v, const StepLayout& l) {
  uint64_t rank = 0, node = 0, local = 0;
  DT_RETURN_IF_ERROR(RequiredUint(env, v.rank, &rank));
  DT_RETURN_IF_ERROR(RequiredUint(env, v.node, &node));
  DT_RETURN_IF_ERROR(RequiredUint(env, v.local, &local));
  if (node >= l.hosts.size()) {
    return Status::InvalidArgument(
        std::string(v.node) + "=" + std::to_string(node) +
        " is past the step's " + std::to_string(l.hosts.size()) + " nodes");
  }
  uint64_t first = 0;
  for (uint64_t n = 0; n < node; ++n) first += l.tasks[n];
  if (first + local != rank) {
    return Status::InvalidArgument(
        "the step's ranks are not laid out in blocks (" + std::string(v.rank) +
        "=" + std::to_string(rank) + " is local rank " + std::to_string(local) +
        " of node " + std::to_string(node) + ", whose first rank is " +
        std::to_string(first) + "): a cyclic distribution?");
  }
  return Status::OK();
}

// Workers of a per-node launcher: RANK is set and is not the Slurm task's,
// or (rank 0, whose RANK and SLURM_PROCID are both 0) there are more
// workers than the step has tasks.
bool LauncherWorker(const EnvMap& env) {
  const std::string* rank = EnvFind(env, "RANK");
  const std::string* task = EnvFind(env, "SLURM_PROCID");
  const std::string* world = EnvFind(env, "WORLD_SIZE");
  const std::string* tasks = EnvFind(env, "SLURM_STEP_NUM_TASKS");
  return rank != nullptr &&
         (task == nullptr || *task != *rank ||
          (world != nullptr && tasks != nullptr && *world != *tasks));
}

// A per-node launcher starts LOCAL_WORLD_SIZE workers on every node.
Status WorkersPerNode(const EnvMap& env, size_t nodes,
                      std::vector<uint32_t>* tasks) {
  uint64_t each = 0;
  DT_RETURN_IF_ERROR(RequiredUint(env, "LOCAL_WORLD_SIZE", &each));
  if (each == 0 || each > UINT32_MAX)
    return Status::InvalidArgument("LOCAL_WORLD_SIZE=" + std::to_string(each) +
                                   " is not a number of workers");
  tasks->assign(nodes, static_cast<uint32_t>(each));
  return Status::OK();
}

}  // namespace

Status ExpandTasksPerNode(std::string_view tasks_per_node, const char* what,
                          std::vector<uint32_t>* counts) {
  std::vector<uint32_t> out;
  for (std::string_view part : Split(tasks_per_node, ',')) {
    uint64_t tasks = 0, repeat = 0;
    if (!ParseRun(part, &tasks, &repeat)) return NotAList(tasks_per_node, what);
    if (out.size() + repeat > kMaxHosts) {
      return Status::InvalidArgument(
          std::string(what) + "='" + ShownValue(tasks_per_node) +
          "' names more than " + std::to_string(kMaxHosts) + " nodes");
    }
    out.insert(out.end(), repeat, static_cast<uint32_t>(tasks));
  }
  *counts = std::move(out);
  return Status::OK();
}

Status TasksOnNode(std::string_view tasks_per_node, uint32_t node_id,
                   const char* what, uint32_t* count) {
  uint64_t first = 0;  // the first node the current run covers
  std::optional<uint32_t> found;
  for (std::string_view part : Split(tasks_per_node, ',')) {
    uint64_t tasks = 0, repeat = 0;
    if (!ParseRun(part, &tasks, &repeat)) return NotAList(tasks_per_node, what);
    if (!found && node_id < first + repeat)
      found = static_cast<uint32_t>(tasks);
    first += repeat;
  }
  if (found) return *count = *found, Status::OK();
  return Status::InvalidArgument(std::string(what) + "='" +
                                 ShownValue(tasks_per_node) + "' has no node " +
                                 std::to_string(node_id));
}

std::string StepLayout::HostOf(uint32_t rank) const {
  uint64_t first = 0;
  for (size_t n = 0; n < hosts.size() && n < tasks.size(); ++n) {
    if (rank < first + tasks[n]) return hosts[n];
    first += tasks[n];
  }
  return "";
}

Status ReadStepLayout(const EnvMap& env, StepLayout* layout) {
  StepLayout l;
  const std::string* nodes = EnvFind(env, "SLURM_STEP_NODELIST");
  if (nodes == nullptr)
    return Status::NotFound("SLURM_STEP_NODELIST is not set");
  DT_RETURN_IF_ERROR(ExpandHosts(*nodes, "SLURM_STEP_NODELIST", &l.hosts));
  if (LauncherWorker(env)) {
    DT_RETURN_IF_ERROR(WorkersPerNode(env, l.hosts.size(), &l.tasks));
    DT_RETURN_IF_ERROR(CheckBlocks(env, kWorkerVars, l));
    *layout = std::move(l);
    return Status::OK();
  }
  const char* var = "SLURM_STEP_TASKS_PER_NODE";
  const std::string* per_node = EnvFind(env, var);
  if (per_node == nullptr)
    return Status::NotFound(std::string(var) + " is not set");
  DT_RETURN_IF_ERROR(ExpandTasksPerNode(*per_node, var, &l.tasks));
  if (l.tasks.size() != l.hosts.size()) {
    return Status::InvalidArgument(
        std::string(var) + "='" + ShownValue(*per_node) + "' covers " +
        std::to_string(l.tasks.size()) + " nodes, SLURM_STEP_NODELIST " +
        std::to_string(l.hosts.size()));
  }
  DT_RETURN_IF_ERROR(CheckBlocks(env, kTaskVars, l));
  *layout = std::move(l);
  return Status::OK();
}

}  // namespace dist_train
