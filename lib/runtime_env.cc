// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime_env.h"

#include <arpa/inet.h>

#include <cstdlib>

#include "hostlist.h"
#include "parse.h"
#include "port.h"
#include "token.h"

extern char** environ;

namespace dist_train {
namespace {

const std::string* Find(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

// The first of `names` that is set, parsed in [min, max].
Status EnvInt(const EnvMap& env, std::initializer_list<const char*> names,
              uint64_t min, uint64_t max, int* out, bool* found) {
  for (const char* name : names) {
    const std::string* v = Find(env, name);
    if (v == nullptr) continue;
    uint64_t n = 0;
    if (!ParseUint(*v, min, max, &n)) {
      return Status::InvalidArgument(
          std::string(name) + "='" + *v + "' is not an integer from " +
          std::to_string(min) + " to " + std::to_string(max));
    }
    *out = static_cast<int>(n);
    *found = true;
    return Status::OK();
  }
  *found = false;
  return Status::OK();
}

Status Require(const EnvMap& env, std::initializer_list<const char*> names,
               uint64_t min, uint64_t max, int* out, const char* what) {
  bool found = false;
  DT_RETURN_IF_ERROR(EnvInt(env, names, min, max, out, &found));
  if (found) return Status::OK();
  return Status::NotFound(
      std::string(what) +
      " is not set: start the workers with srun --dist-train, dt-run or "
      "torchrun, or set Options::" +
      (std::string(what) == "RANK" ? "rank" : "world_size"));
}

Status Master(const Options& in, const EnvMap& env, Options* out) {
  if (out->master_addr.empty()) {
    if (const std::string* a = Find(env, "MASTER_ADDR")) {
      out->master_addr = *a;
    } else if (const std::string* list = Find(env, "SLURM_STEP_NODELIST")) {
      int count = 0;
      DT_RETURN_IF_ERROR(
          FirstHost(*list, "SLURM_STEP_NODELIST", &out->master_addr, &count));
    } else {
      return Status::NotFound(
          "MASTER_ADDR is not set (nor SLURM_STEP_NODELIST)");
    }
  }
  if (in.master_port > 0) return Status::OK();
  bool found = false;
  DT_RETURN_IF_ERROR(
      EnvInt(env, {"MASTER_PORT"}, 1, 65535, &out->master_port, &found));
  if (found) return Status::OK();
  int job = 0, step = 0;
  bool has_job = false, has_step = false;
  DT_RETURN_IF_ERROR(
      EnvInt(env, {"SLURM_JOB_ID"}, 0, UINT32_MAX, &job, &has_job));
  DT_RETURN_IF_ERROR(
      EnvInt(env, {"SLURM_STEP_ID"}, 0, UINT32_MAX, &step, &has_step));
  if (!has_job)
    return Status::NotFound("MASTER_PORT is not set (nor SLURM_JOB_ID)");
  out->master_port = DerivePort(
      static_cast<uint32_t>(job),
      has_step ? static_cast<uint32_t>(step) : kBatchStepId, 20000, 32767);
  return Status::OK();
}

Status CheckKubeflowPods(const EnvMap& env, const Options& o) {
  const std::string* per_pod = Find(env, "PET_NPROC_PER_NODE");
  uint64_t n = 0;
  if (per_pod == nullptr || Find(env, "LOCAL_RANK") != nullptr ||
      !ParseUint(*per_pod, 2, 1 << 20, &n)) {
    return Status::OK();
  }
  return Status::InvalidArgument(
      "WORLD_SIZE=" + std::to_string(o.world_size) +
      " counts Kubeflow pods, but PET_NPROC_PER_NODE=" + *per_pod +
      " asks for several processes per pod: start them with torchrun or "
      "dt-run");
}

}  // namespace

Status ResolveOptions(const Options& in, const EnvMap& env, Options* out) {
  Options o = in;
  if (o.rank < 0)
    DT_RETURN_IF_ERROR(
        Require(env, {"RANK", "SLURM_PROCID"}, 0, 1 << 24, &o.rank, "RANK"));
  if (o.world_size < 0) {
    DT_RETURN_IF_ERROR(
        Require(env, {"WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}, 1,
                1 << 24, &o.world_size, "WORLD_SIZE"));
    DT_RETURN_IF_ERROR(CheckKubeflowPods(env, o));
  }
  if (o.rank >= o.world_size) {
    return Status::InvalidArgument("rank " + std::to_string(o.rank) +
                                   " is not below world size " +
                                   std::to_string(o.world_size));
  }
  DT_RETURN_IF_ERROR(Master(in, env, &o));
  if (o.job_token.empty()) {
    if (const std::string* t = Find(env, kTokenVar)) o.job_token = *t;
  }
  if (!o.job_token.empty()) DT_RETURN_IF_ERROR(CheckToken(o.job_token));
  if (o.job_identity.empty()) {
    const std::string* job = Find(env, "SLURM_JOB_ID");
    const std::string* step = Find(env, "SLURM_STEP_ID");
    o.job_identity =
        job ? "slurm:" + *job + "." + (step ? *step : "batch")
            : "master:" + o.master_addr + ":" + std::to_string(o.master_port);
  }
  if (o.local_addr.empty()) {
    if (const std::string* a = Find(env, "DT_SOCKET_ADDR")) {
      in_addr ip{};
      if (inet_pton(AF_INET, a->c_str(), &ip) != 1) {
        return Status::InvalidArgument("DT_SOCKET_ADDR='" + *a +
                                       "' is not an IPv4 address");
      }
      o.local_addr = *a;
    }
  }
  if (const std::string* t = Find(env, "DT_TIMEOUT")) {
    char* end = nullptr;
    double v = std::strtod(t->c_str(), &end);
    if (t->empty() || *end != '\0' || !(v > 0)) {
      return Status::InvalidArgument("DT_TIMEOUT='" + *t +
                                     "' is not a positive number of seconds");
    }
    o.timeout_seconds = v;
  }
  *out = o;
  return Status::OK();
}

EnvMap ProcessEnv() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

}  // namespace dist_train
