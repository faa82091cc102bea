// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "state.h"

namespace dist_train {

PluginState& State() {
  static PluginState state;
  return state;
}

const char kOptionEnvVar[] =
    "SLURM_SPANK__SLURM_SPANK_OPTION_dist_train_dist_train";

}  // namespace dist_train
