// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// One task's wiring, the pipeline that the SPANK plugin (spank/stepd.cc)
// and dt-wire (tools/dt_wire.cc) share; each only gathers the inputs and
// provides the sink:
//
//   gather inputs (adapter) -> the rank's binding variables -> the env
//   contract (contract/contract.h) -> applied through an EnvSink -> CPU
//   affinity -> the report on the task's stderr -> the warning relay
//   (wiring/task_relay.h, last: it forks).

#ifndef DIST_TRAIN_LIB_WIRING_TASK_WIRING_H_
#define DIST_TRAIN_LIB_WIRING_TASK_WIRING_H_

#include <string>

#include "contract/contract.h"
#include "contract/options.h"
#include "dist_train/status.h"
#include "wiring/env_sink.h"
#include "wiring/node_binding.h"
#include "wiring/task_relay.h"

namespace dist_train {

// What the task's stderr says (the plugin and dt-wire alike): the verbose
// summary, the node's plan table (verbose, first task of the node), the
// binding note (first task of the node), the affinity warning, and the
// contract's warnings (verbose, or the step's very first task).
std::string TaskReport(const NodeBinding& binding, const EnvPlan& plan,
                       const SlurmInputs& in,
                       const std::string& affinity_warning);

// Plans this task's environment from `in` (its binding variables added
// from `binding`), applies it through `sink`, sets the CPU affinity and
// prints the report on stderr. `relay` gets what the relay needs. An error
// fails the task; the sink may then hold part of the plan.
Status WireTask(const PluginConfig& cfg, const JobOptions& opts,
                const NodeBinding& binding, SlurmInputs* in, EnvSink& sink,
                RelayTask* relay);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_WIRING_TASK_WIRING_H_
