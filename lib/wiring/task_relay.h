// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The last stage of a task's wiring (wiring/task_wiring.h): the preemption-
// warning relay (relay/signal_relay.h) put in front of the task's program.

#ifndef DIST_TRAIN_LIB_WIRING_TASK_RELAY_H_
#define DIST_TRAIN_LIB_WIRING_TASK_RELAY_H_

#include <cstdint>
#include <string>

#include "contract/options.h"
#include "wiring/env_sink.h"

namespace dist_train {

// What the relay needs to know of the task: a few numbers, so that the
// plugin can free its plan before the child starts (a forked child's free
// of memory the parent wrote is a copy-on-write fault).
struct RelayTask {
  uint32_t step_id = 0;
  uint32_t local_task_id = 0;
  uint32_t global_task_id = 0;
  bool verbose = false;
  // The child shares the task's memory until it execs the program
  // (RelayConfig::child_execs): the plugin's child does no more than that.
  // dt-wire's child builds the program's arguments first: a plain fork.
  bool shares_memory = true;
};

// Forks the relay unless the admin turned it off or this is the batch step;
// returns in the child (the process that becomes the program) or, when no
// relay is needed or possible, in the task itself. Never fails the task:
// without a relay, the task runs with Slurm's own delivery and a warning.
// `preempt_signal` is the task's DT_PREEMPT_SIGNAL (null: not set). Under
// proctrack/linuxproc Slurm signals every process itself, so there is no
// relay, and DT_RELAY_PID tells launchers not to forward.
void StartTaskRelay(const PluginConfig& cfg, const RelayTask& task,
                    const std::string* preempt_signal, EnvSink& sink);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_WIRING_TASK_RELAY_H_
