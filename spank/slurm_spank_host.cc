// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "slurm_spank_host.h"

#include <cstdlib>

#include "base/slurm_compat.h"
#include "contract/job_deadline.h"
#include "spank_env.h"

namespace dist_train {

spank_context_t SlurmSpankHost::Context() { return spank_context(); }

bool SlurmSpankHost::Remote() { return spank_remote(sp_) != 0; }

spank_err_t SlurmSpankHost::GetItem(spank_item_t item, uint32_t* out) {
  return spank_get_item(sp_, item, out);
}

spank_err_t SlurmSpankHost::GetItem(spank_item_t item, int* out) {
  return spank_get_item(sp_, item, out);
}

spank_err_t SlurmSpankHost::GetItem(spank_item_t item, char** out) {
  return spank_get_item(sp_, item, out);
}

spank_err_t SlurmSpankHost::GlobalTaskId(uint32_t local, uint32_t* global) {
  return spank_get_item(sp_, S_JOB_LOCAL_TO_GLOBAL_ID, local, global);
}

spank_err_t SlurmSpankHost::GetEnv(const char* name, char* buf, int len) {
  return spank_getenv(sp_, name, buf, len);
}

spank_err_t SlurmSpankHost::SetEnv(const char* name, const char* value,
                                   int overwrite) {
  return spank_setenv(sp_, name, value, overwrite);
}

spank_err_t SlurmSpankHost::UnsetEnv(const char* name) {
  return spank_unsetenv(sp_, name);
}

bool SlurmSpankHost::OverwriteEnv(const char* name, const char* value) {
  char** env = nullptr;
  if (spank_get_item(sp_, S_JOB_ENV, &env) != ESPANK_SUCCESS) return false;
  return OverwriteEnvEntry(env, name, value);
}

std::vector<std::string> SlurmSpankHost::JobEnvironment() {
  char** env = nullptr;
  std::vector<std::string> out;
  if (spank_get_item(sp_, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env)
    return out;
  for (char** e = env; *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

const char* SlurmSpankHost::StrError(spank_err_t rc) {
  return spank_strerror(rc);
}

const char* SlurmSpankHost::GetProcessEnv(const char* name) {
  return getenv(name);
}

int SlurmSpankHost::SetProcessEnv(const char* name, const char* value) {
  return setenv(name, value, 1);
}

void SlurmSpankHost::UnsetProcessEnv(const char* name) { unsetenv(name); }

// The deadline, not the raw end time: a job without a limit has one a year
// away (contract/job_deadline.h).
Status SlurmSpankHost::LoadJobEndTime(uint32_t job_id, int64_t* end_time) {
  dist_train::JobTimes times;
  DT_RETURN_IF_ERROR(dist_train::LoadJobTimes(job_id, &times));
  *end_time = dist_train::JobDeadline(times);
  return dist_train::Status::OK();
}

Status SlurmSpankHost::LoadNodeAddr(const std::string& node,
                                    std::string* addr) {
  return dist_train::LoadNodeAddr(node, addr);
}

void SlurmSpankHost::Info(const std::string& msg) {
  slurm_info("%s", msg.c_str());
}

void SlurmSpankHost::Verbose(const std::string& msg) {
  slurm_verbose("%s", msg.c_str());
}

void SlurmSpankHost::Error(const std::string& msg) {
  slurm_error("%s", msg.c_str());
}

}  // namespace dist_train
