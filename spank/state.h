// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The plugin's per-process state. Every Slurm process that loads the plugin
// (sbatch, salloc, srun, slurmstepd) has its own copy; nothing is shared.

#ifndef DIST_TRAIN_SPANK_STATE_H_
#define DIST_TRAIN_SPANK_STATE_H_

#include <string>

#include "dist_train/status.h"
#include "options.h"

namespace dist_train {

struct PluginState {
  PluginConfig config;
  bool option_given = false;  // --dist-train reached this process
  std::string option_text;    // its value as given (for idempotence)
  JobOptions options;
  // An error found in user_init, reported from task_init: a failing
  // user_init is dropped for srun and drains the node for batch steps.
  Status deferred;
  std::string first_node_addr;  // master_addr=nodeaddr lookup result
};

PluginState& State();

// "SLURM_SPANK__SLURM_SPANK_OPTION_dist_train_dist_train": the variable
// srun/sbatch/salloc read the option from (CLI wins over it).
extern const char kOptionEnvVar[];

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_STATE_H_
