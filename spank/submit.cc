// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "submit.h"

#include <cstdlib>
#include <string>

#include "state.h"
#include "token.h"

namespace dist_train {
namespace {

// Slurm hands a batch script's option to the batch step only. srun, sbatch
// and salloc also read an option from SLURM_SPANK__<option variable> (the
// command line wins), so exporting it into the job's environment makes a
// bare `srun` inside the script wired too, while `srun --dist-train=...`
// still overrides it.
int CarryToSteps(const PluginState& st) {
  std::string value = FormatJobOptions(st.options);
  if (setenv(kOptionEnvVar, value.c_str(), 1) != 0) {
    slurm_error("dist-train: cannot export %s", kOptionEnvVar);
    return -1;
  }
  return 0;
}

// sbatch/salloc always make a new token (a job submitted from inside
// another must not share its secret); srun keeps its job's token.
int EnsureToken(bool fresh) {
  const char* existing = getenv(kTokenVar);
  if (existing != nullptr && !fresh) {
    Status s = CheckToken(existing);
    if (!s.ok()) slurm_error("dist-train: %s", s.message().c_str());
    return s.ok() ? 0 : -1;
  }
  std::string token;
  Status s = GenerateToken(&token);
  if (!s.ok()) {
    slurm_error("dist-train: cannot make %s: %s", kTokenVar,
                s.message().c_str());
    return -1;
  }
  if (setenv(kTokenVar, token.c_str(), 1) != 0) {
    slurm_error("dist-train: cannot export %s", kTokenVar);
    return -1;
  }
  return 0;
}

}  // namespace

int SubmitPostOpt(spank_t /*sp*/, bool allocator) {
  const PluginState& st = State();
  if (!st.option_given || !st.options.enabled) return 0;
  if (allocator && st.config.carry_to_steps && CarryToSteps(st) != 0) return -1;
  return EnsureToken(allocator);
}

}  // namespace dist_train
