// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The C API (dist_train/dist_train.h): errors, versions, the environment
// contract and preemption. Communicator: c_api_comm.cc; checkpoint files:
// c_api_checkpoint.cc.

#include <cstring>
#include <optional>
#include <string>

#include "base/env.h"
#include "contract/job_deadline.h"
#include "dist_train/dist_train.h"
#include "dist_train/preemption.h"
#include "runtime/c_api_internal.h"

namespace dist_train {
namespace capi {
namespace {

thread_local std::string t_error;
thread_local const char* t_error_text = "";

void SetError(const char* text) noexcept {
  try {
    t_error = text;
    t_error_text = t_error.c_str();
  } catch (...) {
    t_error_text = "out of memory while recording an error";
  }
}

}  // namespace

int Report(const Status& s) noexcept {
  if (s.ok()) return DT_OK;
  SetError(s.message().c_str());
  return static_cast<int>(s.code());
}

int ReportException(const char* fn, const char* what) noexcept {
  try {
    SetError((std::string(fn) + ": unexpected C++ exception: " + what).c_str());
  } catch (...) {
    SetError("unexpected C++ exception (and no memory to describe it)");
  }
  return DT_INTERNAL;
}

Status NotNull(const void* p, const char* fn, const char* what) {
  if (p != nullptr) return Status::OK();
  return Status::InvalidArgument(std::string(fn) + ": " + what + " is NULL");
}

namespace {

// An int field of dt_env: the first of `names` that is set, in [min, max].
struct IntVar {
  const char* names[3];
  uint64_t min, max;
  int dt_env::*field;
};

constexpr uint64_t kMaxRanks = 1 << 24;  // as Options (runtime_env.cc)

// The order of names is ResolveOptions' (lib/runtime/runtime_env.cc), so
// dt_env says what dt_comm_create will use.
const IntVar kIntVars[] = {
    {{"RANK", "SLURM_PROCID"}, 0, kMaxRanks, &dt_env::rank},
    {{"WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"},
     1,
     kMaxRanks,
     &dt_env::world_size},
    {{"LOCAL_RANK", "SLURM_LOCALID"}, 0, kMaxRanks, &dt_env::local_rank},
    {{"LOCAL_WORLD_SIZE"}, 1, kMaxRanks, &dt_env::local_world_size},
    {{"NODE_RANK", "SLURM_NODEID"}, 0, kMaxRanks, &dt_env::node_rank},
    {{"MASTER_PORT"}, 1, 65535, &dt_env::master_port},
};

Status ReadInt(const EnvMap& env, const IntVar& var, dt_env* out) {
  out->*var.field = -1;
  for (const char* name : var.names) {
    if (name == nullptr || EnvFind(env, name) == nullptr) continue;
    std::optional<uint64_t> n;
    DT_RETURN_IF_ERROR(EnvUint(env, name, var.min, var.max, &n));
    out->*var.field = static_cast<int>(*n);
    break;
  }
  return Status::OK();
}

// Copied whole or refused: a truncated address would connect elsewhere.
Status ReadMasterAddr(const EnvMap& env, dt_env* out) {
  out->master_addr[0] = '\0';
  const std::string* addr = EnvFind(env, "MASTER_ADDR");
  if (addr == nullptr) return Status::OK();
  if (addr->size() >= sizeof(out->master_addr))
    return Status::InvalidArgument(
        "MASTER_ADDR is " + std::to_string(addr->size()) +
        " bytes long; dt_env.master_addr holds at most " +
        std::to_string(sizeof(out->master_addr) - 1));
  memcpy(out->master_addr, addr->c_str(), addr->size() + 1);
  return Status::OK();
}

Status ReadJob(const EnvMap& env, dt_env* out) {
  std::optional<uint64_t> job, restarts;
  std::optional<int64_t> deadline;
  DT_RETURN_IF_ERROR(EnvUint(env, "SLURM_JOB_ID", 1, UINT32_MAX, &job));
  DT_RETURN_IF_ERROR(EnvCount(env, "SLURM_RESTART_COUNT", &restarts));
  DT_RETURN_IF_ERROR(EnvEpochSeconds(env, kDeadlineVar, &deadline));
  out->job_id = job ? static_cast<int64_t>(*job) : -1;
  // Slurm sets SLURM_RESTART_COUNT only once a job was requeued.
  out->restart_count =
      restarts ? static_cast<int64_t>(*restarts) : (job ? 0 : -1);
  out->deadline = deadline.value_or(-1);
  return Status::OK();
}

Status ReadEnv(dt_env* out) {
  DT_RETURN_IF_ERROR(NotNull(out, "dt_env_read", "out"));
  const EnvMap env = ProcessEnv();
  dt_env e{};
  for (const IntVar& var : kIntVars) DT_RETURN_IF_ERROR(ReadInt(env, var, &e));
  DT_RETURN_IF_ERROR(ReadMasterAddr(env, &e));
  DT_RETURN_IF_ERROR(ReadJob(env, &e));
  *out = e;
  return Status::OK();
}

}  // namespace
}  // namespace capi
}  // namespace dist_train

using dist_train::Status;
using dist_train::capi::Guard;
using dist_train::capi::NotNull;

extern "C" {

const char* dt_last_error(void) { return dist_train::capi::t_error_text; }

const char* dt_code_name(int code) {
  // Status::ToString's names (lib/base/status.cc), in dt_code order.
  static const char* const kNames[] = {
      "OK",          "Invalid argument", "Not found",         "IO error",
      "Unavailable", "Timeout",          "Permission denied", "Internal error"};
  if (code < 0 || code >= static_cast<int>(sizeof(kNames) / sizeof(*kNames)))
    return "Unknown";
  return kNames[code];
}

int dt_api_version(void) { return DT_API_VERSION; }
const char* dt_version(void) { return DT_VERSION; }

int dt_env_read(dt_env* out) {
  return Guard("dt_env_read", [&] { return dist_train::capi::ReadEnv(out); });
}

int dt_install_stop_handler(int signal) {
  return Guard("dt_install_stop_handler",
               [&] { return dist_train::InstallStopHandler(signal); });
}

int dt_stop_requested(void) { return dist_train::StopRequested() ? 1 : 0; }
void dt_request_stop(void) { dist_train::RequestStop(); }
void dt_clear_stop_request(void) { dist_train::ClearStopRequest(); }

int dt_agree_to_stop(dt_comm* comm, int* stop) {
  return Guard("dt_agree_to_stop", [&] {
    DT_RETURN_IF_ERROR(NotNull(comm, "dt_agree_to_stop", "comm"));
    DT_RETURN_IF_ERROR(NotNull(stop, "dt_agree_to_stop", "stop"));
    bool any = false;
    DT_RETURN_IF_ERROR(dist_train::AgreeToStop(comm->impl.get(), &any));
    *stop = any ? 1 : 0;
    return Status::OK();
  });
}

int dt_seconds_left(int64_t* seconds) {
  return Guard("dt_seconds_left", [&] {
    DT_RETURN_IF_ERROR(NotNull(seconds, "dt_seconds_left", "seconds"));
    return dist_train::JobSecondsLeft(seconds);
  });
}

int dt_requeue(int max_requeues) {
  return Guard("dt_requeue",
               [&] { return dist_train::RequeueJob(max_requeues); });
}

}  // extern "C"
