// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binder.h"

#include <sched.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "binding_env.h"
#include "port.h"
#include "spank_env.h"
#include "topology.h"

namespace dist_train {
namespace {

// Prefers the cache slurmd wrote; falls back to live discovery.
Status LoadModel(const PluginConfig& cfg, NodeModel* model,
                 std::string* source) {
  if (!cfg.topology.empty()) {
    *source = cfg.topology;
    return LoadNodeModel(cfg.topology, model);
  }
  std::string cache = CachePath(cfg);
  if (!cache.empty() && access(cache.c_str(), R_OK) == 0 &&
      LoadNodeModel(cache, model).ok()) {
    *source = cache;
    return Status::OK();
  }
  *source = "live discovery";
  return LoadNodeModel("", model);
}

// Slurm's step cores ("0-3,8") are indexes of the node's cores in topology
// order; this turns them into OS PU indexes.
Status StepCpus(spank_t sp, uint32_t step_id, const NodeModel& m,
                std::optional<std::vector<int>>* cpus) {
  char* cores = nullptr;
  spank_item_t item =
      step_id == kBatchStepId ? S_JOB_ALLOC_CORES : S_STEP_ALLOC_CORES;
  if (spank_get_item(sp, item, &cores) != ESPANK_SUCCESS || cores == nullptr ||
      *cores == '\0') {
    return Status::OK();  // unknown: every allowed PU
  }
  std::vector<int> idx, pus;
  DT_RETURN_IF_ERROR(ParseIndexList(cores, "S_STEP_ALLOC_CORES", &idx));
  for (int i : idx) {
    if (static_cast<size_t>(i) >= m.cores.size()) continue;
    const std::vector<int>& p = m.cores[i].pus;
    pus.insert(pus.end(), p.begin(), p.end());
  }
  if (!pus.empty()) *cpus = pus;
  return Status::OK();
}

Status StepGpus(spank_t sp, uint32_t step_id,
                std::optional<std::vector<int>>* gpus) {
  const char* var =
      step_id == kBatchStepId ? "SLURM_JOB_GPUS" : "SLURM_STEP_GPUS";
  std::string value;
  if (!GetEnv(sp, var, &value) || value.empty()) return Status::OK();
  std::vector<int> g;
  DT_RETURN_IF_ERROR(ParseIndexList(value, var, &g));
  *gpus = g;
  return Status::OK();
}

double MillisSince(const timespec& start) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start.tv_sec) * 1e3 +
         (now.tv_nsec - start.tv_nsec) / 1e6;
}

Status Plan(spank_t sp, PluginState* st) {
  uint32_t step_id = 0, job_id = 0, ntasks = 0;
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  spank_get_item(sp, S_JOB_ID, &job_id);
  spank_get_item(sp, S_JOB_STEPID, &step_id);
  if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS) {
    return Status::Unavailable("S_JOB_LOCAL_TASK_COUNT is not available");
  }
  DT_RETURN_IF_ERROR(LoadModel(st->config, &st->model, &st->topology_source));
  double load_ms = MillisSince(start);
  BindRequest req;
  req.ntasks = ntasks;
  req.parts = EffectiveBind(st->config, st->options);
  DT_RETURN_IF_ERROR(StepGpus(sp, step_id, &req.gpus));
  DT_RETURN_IF_ERROR(StepCpus(sp, step_id, st->model, &req.cpus));
  DT_RETURN_IF_ERROR(PlanBinding(st->model, req, &st->plan));
  // Once per step per node (tests count these lines in slurmd's log).
  slurm_info(
      "dist-train: step %u.%u: topology from %s loaded in %.1f ms, plan for %u "
      "ranks in %.1f ms total",
      job_id, step_id, st->topology_source.c_str(), load_ms, ntasks,
      MillisSince(start));
  return Status::OK();
}

}  // namespace

std::string CachePath(const PluginConfig& cfg) {
  if (cfg.topology_cache == "none") return "";
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string path = cfg.topology_cache;
  size_t pos = path.find("%h");
  if (pos != std::string::npos) path.replace(pos, 2, host);
  return path;
}

void PrepareBinding(spank_t sp, PluginState* st) {
  BindParts parts = EffectiveBind(st->config, st->options);
  if (!parts.cpu && !parts.gpu && !parts.nic) return;
  Status s = Plan(sp, st);
  if (!s.ok()) {
    st->bind_note = "dist-train: warning: no topology binding: " + s.message();
    return;
  }
  st->bound = true;
  for (const std::string& w : st->plan.warnings) {
    st->bind_note += (st->bind_note.empty() ? "" : "\n") +
                     std::string("dist-train: binding: ") + w;
  }
}

EnvAssignments RankBindingEnv(spank_t sp, const PluginState& st,
                              uint32_t local_rank) {
  if (!st.bound || local_rank >= st.plan.ranks.size()) return {};
  BindingEnvInputs in;
  in.parts = EffectiveBind(st.config, st.options);
  in.nccl_ib_hca = st.config.nccl_ib_hca;
  GetEnv(sp, "CUDA_VISIBLE_DEVICES", &in.slurm_cuda_visible_devices);
  return BindingEnv(st.model, st.plan, st.plan.ranks[local_rank], in);
}

std::string ApplyAffinity(const PluginState& st, uint32_t local_rank) {
  BindParts parts = EffectiveBind(st.config, st.options);
  if (!st.bound || !parts.cpu || local_rank >= st.plan.ranks.size()) return "";
  const std::vector<int>& cpus = st.plan.ranks[local_rank].cpus;
  if (cpus.empty()) return "";
  Status s = ApplyCpuAffinity(cpus);
  if (s.ok()) return "";
  return "dist-train: warning: local rank " + std::to_string(local_rank) +
         ": " + s.message();
}

void SaveTopologyCache(const PluginConfig& cfg) {
  std::string path = CachePath(cfg);
  if (path.empty() || !cfg.topology.empty()) return;
  std::string dir = path.substr(0, path.rfind('/'));
  if (!dir.empty() && mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    slurm_info("dist-train: cannot create %s: %s", dir.c_str(),
               strerror(errno));
    return;
  }
  Status s = SaveTopologyXml(path);
  if (!s.ok())
    slurm_info("dist-train: topology cache: %s", s.message().c_str());
}

}  // namespace dist_train
