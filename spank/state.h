// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The plugin's per-process state. Every Slurm process that loads the plugin
// (sbatch, salloc, srun, slurmstepd) has its own copy; nothing is shared.

#ifndef DIST_TRAIN_SPANK_STATE_H_
#define DIST_TRAIN_SPANK_STATE_H_

#include <string>

#include "contract/options.h"
#include "dist_train/status.h"
#include "wiring/node_binding.h"

namespace dist_train {

struct PluginState {
  PluginConfig config;
  bool option_given = false;  // --dist-train reached this process
  JobOptions options;
  // An error found in a remote hook that must not fail there (init, the
  // option callback, user_init: failing them can drain the node), reported
  // from task_init, which fails only the task.
  Status deferred;
  std::string first_node_addr;  // master_addr=nodeaddr lookup result
  int64_t job_end_time = 0;     // from slurmctld at step start
  // The step's node list and its first host, worked out in user_init
  // (SlurmInputs::first_host_of/first_host); empty when unknown there.
  std::string first_host_of, first_host;
  // The step's binding, planned once per step per node in user_init.
  NodeBinding binding;
};

PluginState& State();

// "SLURM_SPANK__SLURM_SPANK_OPTION_dist_train_dist_train": the variable
// srun/sbatch/salloc read the option from (CLI wins over it).
extern const char kOptionEnvVar[];

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_STATE_H_
