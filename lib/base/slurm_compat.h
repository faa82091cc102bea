// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The libslurm calls whose signatures or rules differ between the Slurm
// releases dist-train supports (22.05, 24.11, 26.05), each behind one
// function, so that no other file needs a SLURM_VERSION_NUMBER guard:
//   - 24.11 removed slurm_get_errno(): the calls below report errno.
//   - 26.05 takes a slurm_step_id_t in slurm_load_job and slurm_requeue
//     (the uint32_t forms are C11 _Generic macros only),
//     and renamed slurm_free_ctl_conf to slurm_free_conf.
//   - 24.05+ standalone programs must call slurm_init() before any API call
//     (else "fatal: No hash plugins loaded"); SlurmInitOnce does, once.
//     The SPANK plugin never calls it: srun, sbatch and slurmstepd have.

#ifndef DIST_TRAIN_LIB_BASE_SLURM_COMPAT_H_
#define DIST_TRAIN_LIB_BASE_SLURM_COMPAT_H_

#include <cstdint>
#include <map>
#include <string>

#include "dist_train/status.h"

namespace dist_train {

// The Slurm release the build was compiled against, e.g. "24.11.5".
std::string SlurmBuildVersion();

// "MAJOR.MINOR" of a SLURM_VERSION_NUMBER-style number (0x180b05 -> "24.11").
std::string SlurmReleaseOf(uint32_t version_number);

// Calls slurm_init(nullptr) once per process, for standalone programs
// (tools, the runtime library). Since libslurm fatal()s without a
// configuration, first checks that one exists (SLURM_CONF, the default
// /etc/slurm/slurm.conf or slurmd's configless cache) and fails with
// NotFound naming them when none does.
Status SlurmInitOnce();

// A job's time limit and times as slurmctld has them now (after requeues
// and TimeLimit updates), unjudged: contract/job_deadline.h decides what
// they mean.
struct JobTimes {
  uint32_t time_limit = 0;  // minutes; Slurm's INFINITE or NO_VAL: none
  int64_t start_time = 0;   // seconds since the epoch; 0: not started
  int64_t end_time = 0;     // seconds since the epoch; 0: unknown
};

// Exactly one RPC (SHOW_LOCAL: no federation lookup first); all zero when
// slurmctld's answer has no record of the job.
Status LoadJobTimes(uint32_t job_id, JobTimes* times);

// Whose a job is, where it runs from and its state (one RPC): for dt-status.
struct JobPlace {
  bool found = false;  // slurmctld still has a record of it
  uint32_t user_id = 0;
  std::string work_dir;  // the job's working directory (SLURM_SUBMIT_DIR)
  std::string state;     // "RUNNING", "PENDING", ... (squeue's names)
};
Status LoadJobPlace(uint32_t job_id, JobPlace* place);

// NodeAddr of `node` as slurmctld knows it (one RPC).
Status LoadNodeAddr(const std::string& node, std::string* addr);

// Requeues the job (slurm_requeue); the error names libslurm's reason.
Status SlurmRequeue(uint32_t job_id);

// The job's ExcNodeList as slurmctld has it now ("" when none; one RPC).
Status LoadJobExcludedNodes(uint32_t job_id, std::string* nodes);

// Sets a pending job's ExcNodeList (slurm_update_job2 by job id string,
// which every release takes). A running job that was just requeued is
// pending (and completing) for slurmctld, which then takes it.
Status SlurmSetExcludedNodes(uint32_t job_id, const std::string& nodes);

// The controller's MaxArraySize (slurm_load_ctl_conf).
Status LoadMaxArraySize(uint32_t* max_array_size);

// Each task of job array `array_job_id` that slurmctld still knows, by
// array index: its state ("PENDING", "RUNNING", "COMPLETED", ...). Pending
// tasks not yet split off come as one record with a task expression
// ("3-5%2"), given to `pending_expr` (empty when none).
Status LoadArrayTaskStates(uint32_t array_job_id,
                           std::map<uint32_t, std::string>* states,
                           std::string* pending_expr);

// The controller's ProctrackType ("proctrack/cgroup").
Status LoadProctrackType(std::string* type);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_SLURM_COMPAT_H_
