// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binder.h"

#include <sched.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/slurm_ids.h"
#include "binding/model_cache.h"
#include "binding/topology.h"
#include "spank_env.h"
#include "wiring/node_binding.h"

namespace dist_train {
namespace {

// Prefers the cache slurmd wrote: the node model saved beside it (no
// hwloc at all), else its XML; falls back to live discovery. Only
// root-written files are handed to hwloc here (it crashes on some malformed
// XML, and a crash here would take slurmstepd with it).
Status LoadModel(SpankHost& host, const PluginConfig& cfg, NodeModel* model,
                 std::string* source) {
  if (!cfg.topology.empty()) {
    *source = cfg.topology;
    return LoadTrustedNodeModel(cfg.topology, model);
  }
  std::string cache = CachePath(cfg);
  if (!cache.empty() && access(cache.c_str(), F_OK) == 0) {
    Status s = LoadNodeModelCache(cache, model);  // no hwloc: fastest
    if (s.ok()) {
      *source = ModelCachePath(cache);
      return s;
    }
    if (s.code() != Status::Code::kNotFound)
      host.Info("dist-train: saved node model not used: " + s.message());
    s = LoadTrustedNodeModel(cache, model);
    if (s.ok()) {
      *source = cache;
      return s;
    }
    host.Info("dist-train: topology cache not used: " + s.message());
  }
  *source = "live discovery";
  return LoadNodeModel("", model);
}

Status StepGpus(SpankHost& host, uint32_t step_id,
                std::optional<std::vector<int>>* gpus) {
  std::string var = JobOrStepVar(step_id, "GPUS");
  std::optional<std::string> value;
  DT_RETURN_IF_ERROR(ReadEnv(host, var.c_str(), &value));
  if (!value || value->empty()) return Status::OK();
  std::vector<int> g;
  DT_RETURN_IF_ERROR(ParseIndexList(*value, var.c_str(), &g));
  *gpus = g;
  return Status::OK();
}

// Slurm's --gpus-per-task, when the step has it (0: not said).
Status GpusPerTask(SpankHost& host, uint32_t* k) {
  std::optional<std::string> value;
  DT_RETURN_IF_ERROR(ReadEnv(host, "SLURM_GPUS_PER_TASK", &value));
  if (!value || value->empty()) return Status::OK();
  return ParseGpusPerTask(*value, "SLURM_GPUS_PER_TASK", k);
}

double MillisSince(const timespec& start) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start.tv_sec) * 1e3 +
         (now.tv_nsec - start.tv_nsec) / 1e6;
}

// "step J.S: topology from X loaded in L ms, plan for N ranks in T ms total"
std::string PlanTimings(uint32_t job_id, uint32_t step_id,
                        const std::string& source, double load_ms,
                        uint32_t ntasks, double total_ms) {
  std::string line(256 + source.size(), '\0');  // room for the numbers
  int n = snprintf(
      line.data(), line.size(),
      "dist-train: step %u.%u: topology from %s loaded in %.1f ms, plan "
      "for %u ranks in %.1f ms total",
      job_id, step_id, source.c_str(), load_ms, ntasks, total_ms);
  line.resize(n > 0 ? std::min(static_cast<size_t>(n), line.size() - 1) : 0);
  return line;
}

// SPANK items and slurmd's cache: what the planner needs, as the plugin
// learns it in user_init.
class SpankBindSource : public BindSource {
 public:
  SpankBindSource(SpankHost& host, const PluginConfig& cfg)
      : host_(host), cfg_(cfg) {
    host_.GetItem(S_JOB_STEPID, &step_id_);
  }

  Status LoadModel(NodeModel* model, std::string* source) override {
    timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    Status s = dist_train::LoadModel(host_, cfg_, model, source);
    load_ms_ = MillisSince(start);
    return s;
  }

  Status Request(const NodeModel& model, BindParts parts,
                 BindRequest* req) override {
    if (host_.GetItem(S_JOB_LOCAL_TASK_COUNT, &req->ntasks) != ESPANK_SUCCESS)
      return Status::Unavailable("S_JOB_LOCAL_TASK_COUNT is not available");
    req->parts = parts;
    DT_RETURN_IF_ERROR(StepGpus(host_, step_id_, &req->gpus));
    DT_RETURN_IF_ERROR(GpusPerTask(host_, &req->gpus_per_task));
    return StepCpus(host_, step_id_, model, &req->cpus);
  }

  void NameRanks(BindPlan* plan) override {
    for (RankPlan& r : plan->ranks) {
      uint32_t global = 0;
      if (host_.GlobalTaskId(r.local_rank, &global) == ESPANK_SUCCESS)
        r.rank = global;
    }
    planned_ = true;
  }

  double load_ms() const { return load_ms_; }
  bool planned() const { return planned_; }

 private:
  SpankHost& host_;
  const PluginConfig& cfg_;
  uint32_t step_id_ = 0;
  double load_ms_ = 0;
  bool planned_ = false;
};

}  // namespace

Status StepCpus(SpankHost& host, uint32_t step_id, const NodeModel& m,
                std::optional<std::vector<int>>* cpus) {
  char* cores = nullptr;
  spank_item_t item =
      step_id == kBatchStepId ? S_JOB_ALLOC_CORES : S_STEP_ALLOC_CORES;
  if (host.GetItem(item, &cores) != ESPANK_SUCCESS || cores == nullptr ||
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

std::string CachePath(const PluginConfig& cfg) {
  if (cfg.topology_cache == "none") return "";
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string path = cfg.topology_cache;
  size_t pos = path.find("%h");
  if (pos != std::string::npos) path.replace(pos, 2, host);
  return path;
}

void PrepareBinding(SpankHost& host, PluginState* st) {
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  SpankBindSource source(host, st->config);
  PlanNodeBinding(st->config, st->options, source, &st->binding);
  if (!source.planned()) return;
  uint32_t job_id = 0, step_id = 0, ntasks = 0;
  host.GetItem(S_JOB_ID, &job_id);
  host.GetItem(S_JOB_STEPID, &step_id);
  host.GetItem(S_JOB_LOCAL_TASK_COUNT, &ntasks);
  // Once per step per node (tests count these lines in slurmd's log).
  host.Info(PlanTimings(job_id, step_id, st->binding.topology_source,
                        source.load_ms(), ntasks, MillisSince(start)));
}

namespace {

// The cache's directory, made by root (slurmd) and writable by root only:
// steps load only a file nobody else could have put there.
Status CacheDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::IOError("cannot create " + dir + ": " + strerror(errno));
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    return Status::IOError(dir + ": " + strerror(errno));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
      ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
    return Status::PermissionDenied(
        dir + " is not a directory owned by root and writable by root only");
  }
  return Status::OK();
}

}  // namespace

void SaveTopologyCache(const PluginConfig& cfg) {
  std::string path = CachePath(cfg);
  if (path.empty() || !cfg.topology.empty()) return;
  std::string dir = path.substr(0, path.rfind('/'));
  Status s = dir.empty() ? Status::OK() : CacheDir(dir);
  if (s.ok()) s = SaveTopologyXml(path);
  if (s.ok()) s = SaveNodeModelCache(path);
  if (!s.ok())
    slurm_info("dist-train: topology cache: %s", s.message().c_str());
}

}  // namespace dist_train
