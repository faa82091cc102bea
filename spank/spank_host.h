// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The seam between the plugin's logic and the process that loads it (srun,
// sbatch, slurmstepd): every SPANK call, libslurm log line and slurmctld
// lookup the logic makes goes through a SpankHost, so that the logic runs
// in unit tests against an in-memory host (fake_spank_host.h) and only
// plugin.cc and slurm_spank_host.cc need Slurm's spank_* symbols, which
// exist only inside srun/sbatch/slurmstepd.

#ifndef DIST_TRAIN_SPANK_SPANK_HOST_H_
#define DIST_TRAIN_SPANK_SPANK_HOST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dist_train/status.h"
#include "spank_api.h"

namespace dist_train {

class SpankHost {
 public:
  virtual ~SpankHost() = default;

  // spank_context(), spank_remote().
  virtual spank_context_t Context() = 0;
  virtual bool Remote() = 0;

  // spank_get_item(), one overload per type of item (spank.h says which).
  virtual spank_err_t GetItem(spank_item_t item, uint32_t* out) = 0;
  virtual spank_err_t GetItem(spank_item_t item, int* out) = 0;
  virtual spank_err_t GetItem(spank_item_t item, char** out) = 0;
  // S_JOB_LOCAL_TO_GLOBAL_ID: the global task id of local task `local`.
  virtual spank_err_t GlobalTaskId(uint32_t local, uint32_t* global) = 0;

  // The job's environment in slurmstepd: spank_getenv(), spank_setenv(),
  // spank_unsetenv(); spank_strerror() for their errors.
  virtual spank_err_t GetEnv(const char* name, char* buf, int len) = 0;
  virtual spank_err_t SetEnv(const char* name, const char* value,
                             int overwrite) = 0;
  virtual spank_err_t UnsetEnv(const char* name) = 0;
  virtual const char* StrError(spank_err_t rc) = 0;
  // Writes `value` over the existing value of `name` in the job's
  // environment (S_JOB_ENV) without reallocating anything, when it fits
  // (OverwriteEnvEntry); false otherwise. For the relay's child:
  // spank_setenv xmallocs and zeroes a quarter MiB (Slurm's setenvf), each
  // page a copy-on-write fault when the child was forked.
  virtual bool OverwriteEnv(const char* name, const char* value) = 0;

  // srun/sbatch/salloc's own environment (getenv, setenv(..., 1),
  // unsetenv), which the job inherits: spank_getenv and co. work only in
  // slurmstepd. SetProcessEnv returns 0 or -1 like setenv.
  virtual const char* GetProcessEnv(const char* name) = 0;
  virtual int SetProcessEnv(const char* name, const char* value) = 0;
  virtual void UnsetProcessEnv(const char* name) = 0;

  // The task's whole environment (S_JOB_ENV) as "NAME=VALUE" entries, for
  // a program the plugin runs on the task's behalf; empty when unknown.
  virtual std::vector<std::string> JobEnvironment() = 0;

  // slurmctld lookups (base/slurm_compat.h), one RPC each.
  virtual Status LoadJobEndTime(uint32_t job_id, int64_t* end_time) = 0;
  virtual Status LoadNodeAddr(const std::string& node, std::string* addr) = 0;

  // Slurm's log (slurm_info, slurm_verbose, slurm_error): the command's
  // stderr or slurmd's log.
  virtual void Info(const std::string& msg) = 0;
  virtual void Verbose(const std::string& msg) = 0;
  virtual void Error(const std::string& msg) = 0;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_SPANK_HOST_H_
