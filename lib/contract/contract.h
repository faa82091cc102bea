// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The env contract as a pure function: Slurm's view of one task in, the
// variables to set and unset for it out. The SPANK plugin only gathers the
// inputs (spank_get_item, spank_getenv) and applies the plan (spank_setenv,
// spank_unsetenv); every rule lives here and is unit-tested.
//
// The table of variables, modes and sources is in docs/env-contract.md.

#ifndef DIST_TRAIN_LIB_CONTRACT_CONTRACT_H_
#define DIST_TRAIN_LIB_CONTRACT_CONTRACT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "contract/env_record.h"
#include "contract/options.h"
#include "dist_train/status.h"

namespace dist_train {

// What Slurm tells us about one task (SPANK items in the remote context).
struct SlurmInputs {
  uint32_t job_id = 0;          // S_JOB_ID
  uint32_t step_id = 0;         // S_JOB_STEPID (kBatchStepId for batch)
  uint32_t step_nnodes = 0;     // S_JOB_NNODES (0 in the batch step)
  uint32_t node_id = 0;         // S_JOB_NODEID
  uint32_t local_tasks = 0;     // S_JOB_LOCAL_TASK_COUNT
  uint32_t total_tasks = 0;     // S_JOB_TOTAL_TASK_COUNT
  uint32_t cpus_per_task = 0;   // S_STEP_CPUS_PER_TASK (0 = unknown)
  uint32_t local_task_id = 0;   // S_TASK_ID
  uint32_t global_task_id = 0;  // S_TASK_GLOBAL_ID
  // NodeAddr of the step's first node; needed only for master_addr=nodeaddr.
  std::string first_node_addr;
  // The first host of `first_host_of`, when the caller worked it out before
  // (the plugin does so once per node, before slurmstepd forks the tasks:
  // parsing a node list in a task writes to pages of slurmstepd's heap, each
  // a copy-on-write fault). Used only while the task's node list is still
  // exactly `first_host_of`; empty = parse it here.
  std::string first_host_of;
  std::string first_host;
  // When the job must end (Unix time, from slurmctld at step start); 0 =
  // unknown or no limit. Exported as DT_JOB_DEADLINE.
  int64_t job_end_time = 0;
  // The task's environment; only the names in InputEnvNames() matter.
  EnvMap env;
  // This rank's variables from the binding plan (lib/binding_env.h); they
  // join the contract in task mode and replace its OMP_NUM_THREADS.
  EnvAssignments binding;
};

// What to do to the task's environment.
struct EnvPlan {
  EnvAssignments set;              // in a stable, documented order
  std::vector<std::string> unset;  // stale values of an enclosing step
  std::vector<std::string> kept;   // user-set values left alone
  std::vector<std::string> warnings;
  std::string summary;   // the `verbose` line (no token)
  bool verbose = false;  // print summary/warnings to stderr
};

// Every environment variable PlanTaskEnv reads.
const std::vector<std::string>& InputEnvNames();

// Every variable dist-train may set (both modes), for docs and tests.
const std::vector<std::string>& ContractVarNames();

// Computes the plan for one task. Errors name the variable or item that
// was wrong; `out` is untouched on error.
Status PlanTaskEnv(const PluginConfig& cfg, const JobOptions& opts,
                   const SlurmInputs& in, EnvPlan* out);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_CONTRACT_H_
