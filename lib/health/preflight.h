// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The preflight gate (docs/user-guide.md, "Preflight"): before the
// training program starts, every task of the step joins one communicator
// (the runtime's own transports, over MASTER_ADDR:MASTER_PORT with the
// job's token), the first task of each node probes the node
// (health/node_probe.h) at the same moment as the others, the probes are
// gathered, an all-reduce test measures the network, and every task
// scores the same table (health/preflight_score.h). Task 0 prints the
// report; the policy decides whether the program starts.

#ifndef DIST_TRAIN_LIB_HEALTH_PREFLIGHT_H_
#define DIST_TRAIN_LIB_HEALTH_PREFLIGHT_H_

#include <cstdio>
#include <string>
#include <vector>

#include "base/env.h"
#include "contract/preflight_words.h"
#include "health/node_probe.h"
#include "health/preflight_score.h"
#include "runtime/node_exclusion.h"

namespace dist_train {

struct PreflightRun {
  double seconds = 60;  // the whole check, rendezvous included
  PreflightPolicy policy = PreflightPolicy::kWarn;
  ScoreOptions score;
  int rank = -1;         // default: SLURM_PROCID
  int size = -1;         // default: SLURM_NTASKS
  int probe = -1;        // probe this node: 1/0; default SLURM_LOCALID == 0
  std::string identity;  // default: SLURM_JOB_ID.SLURM_STEP_ID + ":preflight"
  double probe_seconds = 0.4;  // each of the CPU and memory probes
  // How policy requeue requeues the job (task 0 only): libslurm.
  RequeueOps requeue_ops = SlurmRequeueOps();
};

// A node's probe as a fixed-size record for the all-gather, and back.
// `measured` false: this task did not probe (not its node's first task).
constexpr size_t kProbeRecordBytes = 256;
std::string EncodeProbe(const NodeProbe& probe, bool measured);
bool DecodeProbe(const std::string& record, NodeProbe* probe, bool* measured);

// Fills what `run` left unset from the task's environment `env`
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_JOB_ID,
// SLURM_STEP_ID); errors name the variable.
Status ResolvePreflightRun(const EnvMap& env, PreflightRun* run);

// Runs this task's part (the communicator takes MASTER_ADDR, MASTER_PORT
// and DT_JOB_TOKEN from `env`); the report (task 0) and errors go to
// `out`. Under policy requeue with a bad node, task 0 requeues the job
// without the bad nodes (runtime/node_exclusion.h; its budget from `env`)
// while the others wait. Returns one of the exit statuses of
// contract/preflight_words.h.
int RunPreflight(const EnvMap& env, const PreflightRun& run, FILE* out);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_HEALTH_PREFLIGHT_H_
