// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The preflight gate from a task's side (docs/user-guide.md, "Preflight"):
// before the program, the task runs dt-preflight (health/preflight.h)
// with its own environment and waits for it, within a deadline; its exit
// status and the policy decide whether the program starts.

#ifndef DIST_TRAIN_LIB_WIRING_TASK_PREFLIGHT_H_
#define DIST_TRAIN_LIB_WIRING_TASK_PREFLIGHT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "contract/options.h"
#include "dist_train/status.h"

namespace dist_train {

// Which task this is, for dt-preflight's arguments.
struct PreflightTask {
  uint32_t job_id = 0;
  uint32_t step_id = 0;
  uint32_t rank = 0;   // global task id
  uint32_t size = 1;   // tasks of the step
  bool probes = true;  // the node's first task
};

struct PreflightCommand {
  std::string program;
  std::vector<std::string> args;  // after argv[0]
  std::vector<std::string> env;   // "NAME=VALUE", the task's environment
  double deadline_seconds = 0;    // then SIGKILL
};

// dt-preflight's arguments for `task` (with the site's baseline, where
// plugstack.conf sets one); the deadline leaves the program 15 s past its
// own bound to report.
PreflightCommand PreflightCommandFor(const std::string& program,
                                     const PreflightSetting& setting,
                                     const PreflightTask& task,
                                     std::vector<std::string> env);

// Runs the command (signals unblocked, no shell) and waits for it:
// `exit_code` is its exit status, or -1 when a signal or the deadline
// ended it. Errors: the program could not start, or the deadline passed.
Status RunPreflightCommand(const PreflightCommand& cmd, int* exit_code);

// Whether the program starts: OK, or why not (policy fail). Under policy
// warn, `warning` is set (non-empty) when the check itself did not run.
Status PreflightOutcome(const PreflightSetting& setting, const Status& ran,
                        int exit_code, std::string* warning);

// Whether a task of step `step_id` runs the gate: the job enabled
// dist-train, the setting is not off, and it is not the batch or extern
// step.
bool PreflightApplies(const JobOptions& opts, const PreflightSetting& setting,
                      uint32_t step_id);

// The whole gate for one task, as the plugin and dt-wire run it:
// RunPreflightCommand, then PreflightOutcome.
Status RunTaskPreflight(const std::string& program,
                        const PreflightSetting& setting,
                        const PreflightTask& task, std::vector<std::string> env,
                        std::string* warning);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_WIRING_TASK_PREFLIGHT_H_
