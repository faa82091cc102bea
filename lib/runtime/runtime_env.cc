// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/runtime_env.h"

#include <arpa/inet.h>

#include <algorithm>
#include <optional>

#include "base/env.h"
#include "base/hostlist.h"
#include "base/parse.h"
#include "base/slurm_ids.h"
#include "contract/port.h"
#include "contract/token.h"
#include "runtime/wire.h"

namespace dist_train {
namespace {

// The first of `names` that is set, in [min, max]; unset is not an error.
Status FirstInt(const EnvMap& env, std::initializer_list<const char*> names,
                uint64_t min, uint64_t max, std::optional<uint64_t>* out) {
  out->reset();
  const char* name = EnvFirstSet(env, names);
  return name == nullptr ? Status::OK() : EnvUint(env, name, min, max, out);
}

Status Require(const EnvMap& env, std::initializer_list<const char*> names,
               uint64_t min, uint64_t max, int* out, const char* what) {
  std::optional<uint64_t> n;
  DT_RETURN_IF_ERROR(FirstInt(env, names, min, max, &n));
  if (n) return *out = static_cast<int>(*n), Status::OK();
  return Status::NotFound(
      std::string(what) +
      " is not set: start the workers with srun --dist-train, dt-run or "
      "torchrun, or set Options::" +
      (std::string(what) == "RANK" ? "rank" : "world_size"));
}

// A job's batch script (no RANK or WORLD_SIZE, in a job, in no step) of a
// job with several tasks is none of them: it would wait for the others as
// rank 0 until the timeout. Forgetting srun fails at once instead.
Status NotABatchScriptOfManyTasks(const EnvMap& env) {
  if (EnvFind(env, "RANK") || EnvFind(env, "WORLD_SIZE") ||
      EnvFind(env, "SLURM_STEP_NUM_TASKS") || !EnvFind(env, "SLURM_JOB_ID"))
    return Status::OK();
  std::optional<uint64_t> ntasks;
  DT_RETURN_IF_ERROR(EnvUint(env, "SLURM_NTASKS", 1, 1 << 24, &ntasks));
  if (!ntasks || *ntasks <= 1) return Status::OK();
  return Status::InvalidArgument(
      "RANK is not set: this is job " + *EnvFind(env, "SLURM_JOB_ID") +
      "'s batch script, not one of its " + std::to_string(*ntasks) +
      " tasks; start the workers with srun");
}

// The port the plugin derives from job and step id, for plain Slurm.
Status SlurmPort(const EnvMap& env, int* port) {
  std::optional<uint64_t> job;
  DT_RETURN_IF_ERROR(EnvUint(env, "SLURM_JOB_ID", 0, UINT32_MAX, &job));
  if (!job)
    return Status::NotFound("MASTER_PORT is not set (nor SLURM_JOB_ID)");
  uint32_t step = kBatchStepId;  // unset before 26.05 in the batch script
  std::optional<std::string> raw;
  DT_RETURN_IF_ERROR(EnvParse(
      env, "SLURM_STEP_ID",
      [&step](const std::string& v) { return ParseSlurmStepId(v, &step); },
      "is not a Slurm step id", &raw));
  *port = DerivePort(static_cast<uint32_t>(*job), step, 20000, 32767);
  return Status::OK();
}

Status Master(const Options& in, const EnvMap& env, Options* out) {
  if (out->master_addr.empty()) {
    if (const std::string* a = EnvFind(env, "MASTER_ADDR")) {
      out->master_addr = *a;
    } else if (const std::string* list = EnvFind(env, "SLURM_STEP_NODELIST")) {
      int count = 0;
      DT_RETURN_IF_ERROR(
          FirstHost(*list, "SLURM_STEP_NODELIST", &out->master_addr, &count));
    } else {
      return Status::NotFound(
          "MASTER_ADDR is not set (nor SLURM_STEP_NODELIST)");
    }
  }
  if (in.master_port > 0) return Status::OK();
  std::optional<uint64_t> port;
  DT_RETURN_IF_ERROR(EnvUint(env, "MASTER_PORT", 1, 65535, &port));
  if (!port) return SlurmPort(env, &out->master_port);
  out->master_port = static_cast<int>(*port);
  return Status::OK();
}

// PET_NPROC_PER_NODE is torchrun's to check: besides counts it may be
// auto, cpu or gpu, so only a count above 1 matters here.
Status CheckKubeflowPods(const EnvMap& env, const Options& o) {
  const std::string* per_pod = EnvFind(env, "PET_NPROC_PER_NODE");
  uint64_t n = 0;
  if (per_pod == nullptr || EnvFind(env, "LOCAL_RANK") != nullptr ||
      !ParseUint(*per_pod, 2, 1 << 20, &n)) {
    return Status::OK();
  }
  return Status::InvalidArgument(
      "WORLD_SIZE=" + std::to_string(o.world_size) +
      " counts Kubeflow pods, but PET_NPROC_PER_NODE=" + *per_pod +
      " asks for several processes per pod: start them with torchrun or "
      "dt-run");
}

Status LocalAddr(const EnvMap& env, Options* o) {
  if (!o->local_addr.empty()) return Status::OK();
  std::optional<std::string> addr;
  DT_RETURN_IF_ERROR(EnvParse(
      env, "DT_SOCKET_ADDR",
      [](const std::string& v) {
        in_addr ip{};
        return inet_pton(AF_INET, v.c_str(), &ip) == 1;
      },
      "is not an IPv4 address", &addr));
  if (addr) o->local_addr = *addr;
  return Status::OK();
}

}  // namespace

Status ResolveOptions(const Options& in, const EnvMap& env, Options* out) {
  Options o = in;
  if (o.rank < 0 && o.world_size < 0)
    DT_RETURN_IF_ERROR(NotABatchScriptOfManyTasks(env));
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
    if (const std::string* t = EnvFind(env, kTokenVar)) o.job_token = *t;
  }
  if (!o.job_token.empty()) DT_RETURN_IF_ERROR(CheckToken(o.job_token));
  if (o.job_identity.empty()) {
    const std::string* job = EnvFind(env, "SLURM_JOB_ID");
    const std::string* step = EnvFind(env, "SLURM_STEP_ID");
    o.job_identity =
        job ? "slurm:" + *job + "." + (step ? *step : "batch")
            : "master:" + o.master_addr + ":" + std::to_string(o.master_port);
  }
  DT_RETURN_IF_ERROR(LocalAddr(env, &o));
  std::optional<double> timeout;
  DT_RETURN_IF_ERROR(EnvSeconds(env, "DT_TIMEOUT", &timeout));
  if (timeout) o.timeout_seconds = *timeout;
  // Longer is "never" anyway; past ~9.2e9 s a deadline would overflow into
  // the past and every wait would end at once.
  o.timeout_seconds = std::min(o.timeout_seconds, kMaxWaitSeconds);
  *out = o;
  return Status::OK();
}

}  // namespace dist_train
