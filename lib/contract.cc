// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract.h"

#include <algorithm>

#include "hostlist.h"
#include "parse.h"
#include "port.h"
#include "token.h"

namespace dist_train {
namespace {

const char* const kTaskVars[] = {
    "MASTER_ADDR",      "MASTER_PORT",      "WORLD_SIZE", "RANK",
    "LOCAL_RANK",       "LOCAL_WORLD_SIZE", "NODE_RANK",  "GROUP_RANK",
    "GROUP_WORLD_SIZE", "ROLE_NAME",        "ROLE_RANK",  "ROLE_WORLD_SIZE",
    "OMP_NUM_THREADS"};
const char* const kNodeVars[] = {
    "MASTER_ADDR",    "MASTER_PORT",       "NNODES",          "NODE_RANK",
    "NPROC_PER_NODE", "PET_MASTER_ADDR",   "PET_MASTER_PORT", "PET_NNODES",
    "PET_NODE_RANK",  "PET_NPROC_PER_NODE"};

// Step-wide facts every task of a step shares.
struct StepShape {
  std::string master_addr;
  uint16_t master_port = 0;
  uint32_t nnodes = 0, node_rank = 0;
  uint32_t world_size = 0, rank = 0;
  uint32_t local_world_size = 0, local_rank = 0;
};

const std::string* Find(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

// Reads an unsigned env value, falling back to `item` when absent.
Status EnvUint(const EnvMap& env, const char* name, uint32_t item,
               uint32_t* out) {
  const std::string* v = Find(env, name);
  uint64_t n = item;
  if (v != nullptr && !ParseUint(*v, 0, UINT32_MAX, &n)) {
    return Status::InvalidArgument(std::string(name) + "='" + *v +
                                   "' is not a non-negative integer");
  }
  *out = static_cast<uint32_t>(n);
  return Status::OK();
}

Status MasterAddr(const PluginConfig& cfg, const SlurmInputs& in,
                  std::string* addr) {
  bool batch = in.step_id == kBatchStepId;
  const char* var = batch ? "SLURM_JOB_NODELIST" : "SLURM_STEP_NODELIST";
  const std::string* list = Find(in.env, var);
  if (list == nullptr) {
    return Status::NotFound(std::string(var) + " is not set");
  }
  std::string first;
  int count = 0;
  DT_RETURN_IF_ERROR(FirstHost(*list, var, &first, &count));
  if (cfg.master_addr == AddrPolicy::kNodeAddr) {
    if (in.first_node_addr.empty()) {
      return Status::NotFound("master_addr=nodeaddr: no NodeAddr known for " +
                              first);
    }
    *addr = in.first_node_addr;
    return Status::OK();
  }
  *addr = first + cfg.master_addr_suffix;
  return Status::OK();
}

Status MasterPort(const PluginConfig& cfg, const SlurmInputs& in,
                  uint16_t* port) {
  const std::string* resv = Find(in.env, "SLURM_STEP_RESV_PORTS");
  if (resv != nullptr) return FirstReservedPort(*resv, port);
  *port = DerivePort(in.job_id, in.step_id, cfg.port_min, cfg.port_max);
  return Status::OK();
}

Status CheckBelow(const char* what, uint32_t value, const char* bound_name,
                  uint32_t bound) {
  if (value < bound) return Status::OK();
  return Status::InvalidArgument(std::string(what) + "=" +
                                 std::to_string(value) + " is not below " +
                                 bound_name + "=" + std::to_string(bound));
}

Status Shape(const PluginConfig& cfg, const SlurmInputs& in, StepShape* s) {
  DT_RETURN_IF_ERROR(MasterAddr(cfg, in, &s->master_addr));
  DT_RETURN_IF_ERROR(MasterPort(cfg, in, &s->master_port));
  if (in.step_id == kBatchStepId) {
    // The batch step is one task on the job's first node (its item
    // S_JOB_NNODES is 0).
    s->nnodes = s->world_size = s->local_world_size = 1;
    return Status::OK();
  }
  s->nnodes = in.step_nnodes;
  s->world_size = in.total_tasks;
  s->local_world_size = in.local_tasks;
  DT_RETURN_IF_ERROR(
      EnvUint(in.env, "SLURM_NODEID", in.node_id, &s->node_rank));
  DT_RETURN_IF_ERROR(
      EnvUint(in.env, "SLURM_PROCID", in.global_task_id, &s->rank));
  DT_RETURN_IF_ERROR(
      EnvUint(in.env, "SLURM_LOCALID", in.local_task_id, &s->local_rank));
  if (Find(in.env, "SLURM_HET_SIZE") != nullptr) return Status::OK();
  DT_RETURN_IF_ERROR(
      CheckBelow("SLURM_NODEID", s->node_rank, "nodes", s->nnodes));
  DT_RETURN_IF_ERROR(
      CheckBelow("SLURM_PROCID", s->rank, "tasks", s->world_size));
  return CheckBelow("SLURM_LOCALID", s->local_rank, "local tasks",
                    s->local_world_size);
}

// GPUs Slurm gave this node for the step, or 0 when it manages none.
Status GpusOnNode(const EnvMap& env, uint32_t* gpus) {
  *gpus = 0;
  if (Find(env, "SLURM_GPUS_ON_NODE") != nullptr) {
    return EnvUint(env, "SLURM_GPUS_ON_NODE", 0, gpus);
  }
  const std::string* cvd = Find(env, "CUDA_VISIBLE_DEVICES");
  if (cvd != nullptr && !cvd->empty() && *cvd != "NoDevFiles") {
    *gpus = static_cast<uint32_t>(Split(*cvd, ',').size());
  }
  return Status::OK();
}

EnvAssignments TaskModeVars(const PluginConfig& cfg, const SlurmInputs& in,
                            const StepShape& s) {
  std::string rank = std::to_string(s.rank);
  std::string world = std::to_string(s.world_size);
  EnvAssignments v = {{"MASTER_ADDR", s.master_addr},
                      {"MASTER_PORT", std::to_string(s.master_port)},
                      {"WORLD_SIZE", world},
                      {"RANK", rank},
                      {"LOCAL_RANK", std::to_string(s.local_rank)},
                      {"LOCAL_WORLD_SIZE", std::to_string(s.local_world_size)},
                      {"NODE_RANK", std::to_string(s.node_rank)},
                      {"GROUP_RANK", std::to_string(s.node_rank)},
                      {"GROUP_WORLD_SIZE", std::to_string(s.nnodes)},
                      {"ROLE_NAME", "default"},
                      {"ROLE_RANK", rank},
                      {"ROLE_WORLD_SIZE", world}};
  if (cfg.omp_num_threads && in.cpus_per_task > 0) {
    v.emplace_back("OMP_NUM_THREADS", std::to_string(in.cpus_per_task));
  }
  return v;
}

EnvAssignments NodeModeVars(const StepShape& s, uint32_t nproc) {
  EnvAssignments v = {{"MASTER_ADDR", s.master_addr},
                      {"MASTER_PORT", std::to_string(s.master_port)},
                      {"NNODES", std::to_string(s.nnodes)},
                      {"NODE_RANK", std::to_string(s.node_rank)},
                      {"NPROC_PER_NODE", std::to_string(nproc)}};
  for (size_t i = 0; i < 5; ++i)
    v.emplace_back("PET_" + v[i].first, v[i].second);
  return v;
}

// Adds `extra` to `wanted`, replacing variables of the same name.
void Merge(const EnvAssignments& extra, EnvAssignments* wanted) {
  for (const auto& [name, value] : extra) {
    auto same = [&](const auto& a) { return a.first == name; };
    auto it = std::find_if(wanted->begin(), wanted->end(), same);
    if (it != wanted->end()) {
      it->second = value;
    } else {
      wanted->emplace_back(name, value);
    }
  }
}

// Splits `wanted` into what to set and what the user set on purpose, and
// lists stale exported variables that are not wanted any more.
// Values Slurm itself set (not the user): CUDA_VISIBLE_DEVICES when Slurm
// manages the step's GPUs.
bool SetBySlurm(const EnvMap& env, const std::string& name) {
  return name == "CUDA_VISIBLE_DEVICES" &&
         (Find(env, "SLURM_STEP_GPUS") != nullptr ||
          Find(env, "SLURM_JOB_GPUS") != nullptr);
}

void ApplyPrecedence(const EnvMap& env, const ExportRecord& record,
                     const EnvAssignments& wanted, EnvPlan* plan) {
  for (const auto& [name, value] : wanted) {
    const std::string* current = Find(env, name.c_str());
    if (current != nullptr && !WasExportedUnchanged(record, name, *current) &&
        !SetBySlurm(env, name)) {
      plan->kept.push_back(name);
    } else {
      plan->set.emplace_back(name, value);
    }
  }
  for (const auto& [name, hash] : record) {
    bool wanted_now =
        std::any_of(wanted.begin(), wanted.end(),
                    [&](const auto& a) { return a.first == name; });
    const std::string* current = Find(env, name.c_str());
    if (!wanted_now && current != nullptr &&
        WasExportedUnchanged(record, name, *current)) {
      plan->unset.push_back(name);
    }
  }
}

std::string Summary(const SlurmInputs& in, Mode mode, const StepShape& s,
                    uint32_t nproc, const EnvPlan& plan) {
  const std::string* host = Find(in.env, "SLURMD_NODENAME");
  std::string step =
      in.step_id == kBatchStepId ? "batch" : std::to_string(in.step_id);
  std::string line = "dist-train: " + (host ? *host : std::string("?")) +
                     " step " + std::to_string(in.job_id) + "." + step;
  if (mode == Mode::kTask) {
    line += " rank " + std::to_string(s.rank) + "/" +
            std::to_string(s.world_size) + " local " +
            std::to_string(s.local_rank) + "/" +
            std::to_string(s.local_world_size);
  }
  line +=
      " node " + std::to_string(s.node_rank) + "/" + std::to_string(s.nnodes);
  if (mode == Mode::kNode) line += " nproc " + std::to_string(nproc);
  // Show what the task will really use, including values the user kept.
  auto effective = [&](const char* name, const std::string& ours) {
    bool kept =
        std::find(plan.kept.begin(), plan.kept.end(), name) != plan.kept.end();
    return kept ? in.env.at(name) : ours;
  };
  line += " master " + effective("MASTER_ADDR", s.master_addr) + ":" +
          effective("MASTER_PORT", std::to_string(s.master_port)) + " mode " +
          ModeName(mode);
  for (const std::string& name : plan.kept) {
    line += "; kept user-set " + name + "=" + in.env.at(name);
  }
  return line;
}

Status NodeProcs(const JobOptions& opts, const SlurmInputs& in,
                 uint32_t* nproc) {
  if (opts.nproc) return *nproc = *opts.nproc, Status::OK();
  uint32_t gpus = 0;
  DT_RETURN_IF_ERROR(GpusOnNode(in.env, &gpus));
  *nproc = std::max<uint32_t>(gpus, 1);
  return Status::OK();
}

Status CheckInheritedToken(const EnvMap& env) {
  const std::string* token = Find(env, kTokenVar);
  return token == nullptr ? Status::OK() : CheckToken(*token);
}

}  // namespace

const std::vector<std::string>& ContractVarNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v(std::begin(kTaskVars), std::end(kTaskVars));
    for (const char* n : kNodeVars) {
      if (std::find(v.begin(), v.end(), n) == v.end()) v.emplace_back(n);
    }
    return v;
  }();
  return names;
}

const std::vector<std::string>& InputEnvNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"SLURM_STEP_NODELIST",
                                  "SLURM_JOB_NODELIST",
                                  "SLURM_STEP_RESV_PORTS",
                                  "SLURM_PROCID",
                                  "SLURM_LOCALID",
                                  "SLURM_NODEID",
                                  "SLURM_HET_SIZE",
                                  "SLURMD_NODENAME",
                                  "SLURM_GPUS_ON_NODE",
                                  "CUDA_VISIBLE_DEVICES",
                                  "SLURM_STEP_GPUS",
                                  "SLURM_JOB_GPUS",
                                  kExportedVar,
                                  kTokenVar};
    // Binding variables, so inherited ones are recognised and recomputed.
    const char* const binding_vars[] = {"CUDA_DEVICE_ORDER",
                                        "ROCR_VISIBLE_DEVICES",
                                        "DT_LOCAL_GPU",
                                        "DT_GPU",
                                        "DT_NIC",
                                        "DT_NIC_PCI",
                                        "UCX_NET_DEVICES",
                                        "DT_JOB_DEADLINE",
                                        "NCCL_IB_HCA",
                                        "DT_CPUS"};
    v.insert(v.end(), std::begin(binding_vars), std::end(binding_vars));
    for (const std::string& n : ContractVarNames()) v.push_back(n);
    return v;
  }();
  return names;
}

Status PlanTaskEnv(const PluginConfig& cfg, const JobOptions& opts,
                   const SlurmInputs& in, EnvPlan* out) {
  EnvPlan plan;
  ExportRecord record;
  const std::string* recorded = Find(in.env, kExportedVar);
  DT_RETURN_IF_ERROR(ParseExportRecord(recorded ? *recorded : "", &record));
  plan.verbose = opts.verbose.value_or(cfg.verbose);
  if (!opts.enabled) {
    ApplyPrecedence(in.env, record, {}, &plan);
    if (!plan.unset.empty()) plan.unset.emplace_back(kExportedVar);
    *out = std::move(plan);
    return Status::OK();
  }
  DT_RETURN_IF_ERROR(CheckInheritedToken(in.env));
  StepShape shape;
  DT_RETURN_IF_ERROR(Shape(cfg, in, &shape));
  Mode mode = opts.mode.value_or(cfg.default_mode);
  uint32_t nproc = 0;
  if (mode == Mode::kNode) DT_RETURN_IF_ERROR(NodeProcs(opts, in, &nproc));
  EnvAssignments wanted = mode == Mode::kTask ? TaskModeVars(cfg, in, shape)
                                              : NodeModeVars(shape, nproc);
  if (mode == Mode::kTask) Merge(in.binding, &wanted);
  if (in.job_end_time > 0) {
    wanted.emplace_back("DT_JOB_DEADLINE", std::to_string(in.job_end_time));
  }
  ApplyPrecedence(in.env, record, wanted, &plan);
  if (mode == Mode::kNode && shape.local_world_size > 1) {
    plan.warnings.push_back(
        "dist-train: mode=node expects one task per node, but this node runs " +
        std::to_string(shape.local_world_size) +
        " tasks of the step; each would start its own launcher");
  }
  if (Find(in.env, kTokenVar) == nullptr) {
    plan.warnings.push_back(
        "dist-train: DT_JOB_TOKEN is not set (job submitted with "
        "--export=NONE?); rendezvous will be unauthenticated");
  }
  plan.summary = Summary(in, mode, shape, nproc, plan);
  plan.set.emplace_back(kExportedVar, FormatExportRecord(plan.set));
  *out = std::move(plan);
  return Status::OK();
}

}  // namespace dist_train
