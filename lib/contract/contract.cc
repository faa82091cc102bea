// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/contract.h"

#include <algorithm>

#include "base/hostlist.h"
#include "base/parse.h"
#include "contract/job_deadline.h"
#include "contract/port.h"
#include "contract/token.h"
#include "contract/torchrun_vars.h"

namespace dist_train {
namespace {

// Step-wide facts every task of a step shares (nproc_per_node unused).
using StepShape = TorchrunPlace;

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
  std::string var = JobOrStepVar(in.step_id, "NODELIST");
  const std::string* list = Find(in.env, var.c_str());
  if (list == nullptr) return Status::NotFound(var + " is not set");
  std::string first;
  int count = 0;
  if (!in.first_host.empty() && in.first_host_of == *list) {
    first = in.first_host;
  } else {
    DT_RETURN_IF_ERROR(FirstHost(*list, var.c_str(), &first, &count));
  }
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
                  uint32_t* port) {
  uint16_t chosen = 0;
  const std::string* resv = Find(in.env, "SLURM_STEP_RESV_PORTS");
  if (resv != nullptr) {
    DT_RETURN_IF_ERROR(FirstReservedPort(*resv, &chosen));
  } else {
    chosen = DerivePort(in.job_id, in.step_id, cfg.port_min, cfg.port_max);
  }
  *port = chosen;
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

// The batch step of a job with several workers is none of them: how many
// tasks (task mode) or nodes (node mode) its sruns will start. The batch
// step's own items say 1; the job's nodes, SLURM_NTASKS and
// SLURM_NTASKS_PER_NODE (each set only when asked for) say more.
Status BatchWorkers(const SlurmInputs& in, Mode mode, uint32_t* workers) {
  uint64_t nodes = 1;
  const std::string* list = Find(in.env, "SLURM_JOB_NODELIST");
  if (list != nullptr && !CountHosts(*list, &nodes))
    return Status::InvalidArgument("SLURM_JOB_NODELIST='" + *list +
                                   "' is not a host list");
  uint32_t ntasks = 0, per_node = 1;
  DT_RETURN_IF_ERROR(EnvUint(in.env, "SLURM_NTASKS", 0, &ntasks));
  DT_RETURN_IF_ERROR(EnvUint(in.env, "SLURM_NTASKS_PER_NODE", 1, &per_node));
  uint64_t tasks = std::max<uint64_t>(ntasks, nodes * std::max(per_node, 1u));
  *workers = static_cast<uint32_t>(
      std::min<uint64_t>(mode == Mode::kNode ? nodes : tasks, UINT32_MAX));
  return Status::OK();
}

// Only what is the same for every worker: where they meet.
EnvAssignments MeetingVars(const StepShape& s) {
  return {{"MASTER_ADDR", s.master_addr},
          {"MASTER_PORT", std::to_string(s.master_port)}};
}

std::string NotAWorkerHint(Mode mode, uint32_t workers) {
  if (mode == Mode::kNode) {
    return "dist-train: the batch script is not one of this job's " +
           std::to_string(workers) +
           " node launchers: NNODES, NODE_RANK and NPROC_PER_NODE are set "
           "in srun's tasks only (srun --ntasks-per-node=1 LAUNCHER ...)";
  }
  return "dist-train: the batch script is not one of this job's " +
         std::to_string(workers) +
         " tasks: RANK, WORLD_SIZE and LOCAL_RANK are set in srun's tasks "
         "only (srun python3 train.py, not python3 train.py)";
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

TorchrunPlace Place(const StepShape& s, uint32_t nproc) {
  TorchrunPlace p = s;
  p.nproc_per_node = nproc;
  return p;
}

EnvAssignments TaskModeVars(const PluginConfig& cfg, const SlurmInputs& in,
                            const StepShape& s) {
  EnvAssignments v = TorchrunEnv(TorchrunWorkerVars(), Place(s, 0));
  if (cfg.omp_num_threads && in.cpus_per_task > 0) {
    v.emplace_back("OMP_NUM_THREADS", std::to_string(in.cpus_per_task));
  }
  return v;
}

// The launcher's variables, then each again as PET_<NAME> (torchrun's
// environment form of its options).
EnvAssignments NodeModeVars(const StepShape& s, uint32_t nproc) {
  EnvAssignments v = TorchrunEnv(TorchrunLauncherVars(), Place(s, nproc));
  EnvAssignments pet;
  for (const auto& [name, value] : v)
    pet.emplace_back(kPetPrefix + name, value);
  v.insert(v.end(), pet.begin(), pet.end());
  return v;
}

// Adds `extra` to `wanted`, replacing variables of the same name.
void Merge(const EnvAssignments& extra, EnvAssignments* wanted) {
  // Not a structured binding: clang <= 15 cannot capture one in a lambda.
  for (const auto& var : extra) {
    auto same = [&var](const auto& a) { return a.first == var.first; };
    auto it = std::find_if(wanted->begin(), wanted->end(), same);
    if (it != wanted->end()) {
      it->second = var.second;
    } else {
      wanted->push_back(var);
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
  for (const auto& recorded : record) {
    const std::string& name = recorded.first;  // captured: see Merge
    bool wanted_now =
        std::any_of(wanted.begin(), wanted.end(),
                    [&name](const auto& a) { return a.first == name; });
    const std::string* current = Find(env, name.c_str());
    if (!wanted_now && current != nullptr &&
        WasExportedUnchanged(record, name, *current)) {
      plan->unset.push_back(name);
    }
  }
}

std::string Summary(const SlurmInputs& in, Mode mode, const StepShape& s,
                    uint32_t nproc, uint32_t batch_workers,
                    const EnvPlan& plan) {
  const std::string* host = Find(in.env, "SLURMD_NODENAME");
  std::string step =
      in.step_id == kBatchStepId ? "batch" : std::to_string(in.step_id);
  std::string line = "dist-train: " + (host ? *host : std::string("?")) +
                     " step " + std::to_string(in.job_id) + "." + step;
  if (batch_workers > 1) {
    line += " (not a worker: " + std::to_string(batch_workers) +
            (mode == Mode::kNode ? " nodes)" : " tasks)");
  } else if (mode == Mode::kTask) {
    line += " rank " + std::to_string(s.rank) + "/" +
            std::to_string(s.world_size) + " local " +
            std::to_string(s.local_rank) + "/" +
            std::to_string(s.local_world_size);
  }
  if (batch_workers <= 1) {
    line +=
        " node " + std::to_string(s.node_rank) + "/" + std::to_string(s.nnodes);
    if (mode == Mode::kNode) line += " nproc " + std::to_string(nproc);
  }
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
    std::vector<std::string> v = TorchrunVarNames(TorchrunWorkerVars());
    v.emplace_back("OMP_NUM_THREADS");
    v.emplace_back(kWatchdogVar);
    v.emplace_back(kWatchdogPolicyVar);
    auto add = [&v](const std::string& n) {
      if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
    };
    const std::vector<std::string> node =
        TorchrunVarNames(TorchrunLauncherVars());
    for (const std::string& n : node) add(n);
    for (const std::string& n : node) add(kPetPrefix + n);
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
                                  "SLURM_NTASKS",
                                  "SLURM_NTASKS_PER_NODE",
                                  "SLURM_HET_SIZE",
                                  "SLURMD_NODENAME",
                                  "SLURM_GPUS_ON_NODE",
                                  "CUDA_VISIBLE_DEVICES",
                                  "SLURM_STEP_GPUS",
                                  "SLURM_JOB_GPUS",
                                  kExportedVar,
                                  kTokenVar};
    // Binding variables, so inherited ones are recognised and recomputed.
    // ROCR_VISIBLE_DEVICES: binding/gpu_vendor.cc's table (not linked
    // here: libdist-train.so has no binding code); contract_test checks.
    const char* const binding_vars[] = {"CUDA_DEVICE_ORDER",
                                        "ROCR_VISIBLE_DEVICES",
                                        "DT_LOCAL_GPU",
                                        "DT_GPU",
                                        "DT_GPUS",
                                        "DT_NIC",
                                        "DT_NICS",
                                        "DT_NIC_PCI",
                                        "UCX_NET_DEVICES",
                                        kDeadlineVar,
                                        "NCCL_IB_HCA",
                                        "DT_CPUS",
                                        "NCCL_SOCKET_IFNAME",
                                        "GLOO_SOCKET_IFNAME"};
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
  uint32_t batch_workers = 1;
  if (in.step_id == kBatchStepId)
    DT_RETURN_IF_ERROR(BatchWorkers(in, mode, &batch_workers));
  EnvAssignments wanted = mode == Mode::kTask ? TaskModeVars(cfg, in, shape)
                                              : NodeModeVars(shape, nproc);
  if (batch_workers > 1) wanted = MeetingVars(shape);
  if (mode == Mode::kTask) Merge(in.binding, &wanted);
  if (in.job_end_time > 0) {
    wanted.emplace_back(kDeadlineVar, std::to_string(in.job_end_time));
  }
  for (auto& kv : WatchdogVars(opts)) wanted.push_back(std::move(kv));
  for (auto& kv : NodeLossVars(opts)) wanted.push_back(std::move(kv));
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
  if (batch_workers > 1) {
    plan.warnings.push_back(NotAWorkerHint(mode, batch_workers));
  }
  plan.summary = Summary(in, mode, shape, nproc, batch_workers, plan);
  plan.set.emplace_back(kExportedVar, FormatExportRecord(plan.set));
  *out = std::move(plan);
  return Status::OK();
}

}  // namespace dist_train
