// Copyright dist-train authors. SPDX-License-Identifier: MIT
#ifndef DIST_TRAIN_SPANK_RELAY_H_
#define DIST_TRAIN_SPANK_RELAY_H_

#include "contract/contract.h"
#include "spank_host.h"
#include "state.h"

namespace dist_train {

// What the relay needs to know of the task: a few numbers, so that the
// caller can free its plan before the child starts (a forked child's free
// of memory the parent wrote is a copy-on-write fault; a sharing child's
// frees would run on the relay's heap until the exec).
struct RelayTask {
  uint32_t step_id = 0;
  uint32_t local_task_id = 0;
  uint32_t global_task_id = 0;
  bool verbose = false;
};

// Last step of task_init: puts the preemption-warning relay in front of the
// task (lib/signal_relay.h) when the job uses --dist-train, the step is not
// the batch step and the admin did not turn it off. Never fails the task:
// when the relay cannot start, the task runs with Slurm's delivery.
void MaybeStartRelay(SpankHost& host, const PluginState& st,
                     const RelayTask& task);

// The admin's warning signals plus the job's DT_PREEMPT_SIGNAL when it is
// one that can be a warning (TERM/INT keep their meaning).
uint64_t WarningMask(SpankHost& host, const PluginConfig& cfg);

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_RELAY_H_
