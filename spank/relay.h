// Copyright dist-train authors. SPDX-License-Identifier: MIT
#ifndef DIST_TRAIN_SPANK_RELAY_H_
#define DIST_TRAIN_SPANK_RELAY_H_

#include "contract.h"
#include "spank_api.h"
#include "state.h"

namespace dist_train {

// Last step of task_init: puts the preemption-warning relay in front of the
// task (lib/signal_relay.h) when the job uses --dist-train, the step is not
// the batch step and the admin did not turn it off. Never fails the task:
// when the relay cannot start, the task runs with Slurm's delivery.
void MaybeStartRelay(spank_t sp, const PluginState& st, const SlurmInputs& in,
                     bool verbose);

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_RELAY_H_
