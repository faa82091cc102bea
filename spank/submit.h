// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Submit side: sbatch/salloc (allocator context) and srun (local context).
// The option was already validated by its callback, so a wrong word has
// made the command fail before any node sees it.

#ifndef DIST_TRAIN_SPANK_SUBMIT_H_
#define DIST_TRAIN_SPANK_SUBMIT_H_

#include "spank_host.h"
#include "state.h"

namespace dist_train {

// Carries the option to every srun of the job (allocator only) and makes
// sure the job has a DT_JOB_TOKEN. Returns 0 or -1 (command fails).
int SubmitPostOpt(SpankHost& host, const PluginState& st, bool allocator);

// srun, after the step is created and before it is launched: looks up once
// for the whole step what every node needs from slurmctld (step_facts.h)
// and exports it to the step. Never fails srun.
int SrunLocalUserInit(SpankHost& host, const PluginState& st);

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_SUBMIT_H_
