// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Where a task's wiring goes: the task's environment as its adapter writes
// it. The plugin's sink is slurmstepd's job environment (spank_setenv),
// dt-wire's is its own process environment (setenv), the tests' a map.

#ifndef DIST_TRAIN_LIB_WIRING_ENV_SINK_H_
#define DIST_TRAIN_LIB_WIRING_ENV_SINK_H_

#include <string>

#include "base/env.h"
#include "contract/contract.h"
#include "dist_train/status.h"

namespace dist_train {

class EnvSink {
 public:
  virtual ~EnvSink() = default;
  // NAME=VALUE, over any value NAME had. The error names the variable
  // ("set NAME: why").
  virtual Status Set(const std::string& name, const std::string& value) = 0;
  // Removes NAME; a name that is not set is no error ("unset NAME: why").
  virtual Status Unset(const std::string& name) = 0;
  // SLURM_TASK_PID in the relay's child, which becomes the task. The
  // plugin's sink writes it in place (no allocation in a forked child).
  virtual Status SetTaskPid(const std::string& pid) {
    return Set("SLURM_TASK_PID", pid);
  }
};

// The calling process's environment (setenv/unsetenv): dt-wire's, which
// the program it execs inherits.
class ProcessEnvSink : public EnvSink {
 public:
  Status Set(const std::string& name, const std::string& value) override;
  Status Unset(const std::string& name) override;
};

// An EnvMap as the sink: the task's environment held in memory (tests,
// and callers that look at a plan's effect before applying it).
class MapEnvSink : public EnvSink {
 public:
  Status Set(const std::string& name, const std::string& value) override {
    env[name] = value;
    return Status::OK();
  }
  Status Unset(const std::string& name) override {
    env.erase(name);
    return Status::OK();
  }
  EnvMap env;
};

// Applies `plan`: its unsets first, then its sets, in order. Stops at the
// first error, which names the variable.
Status ApplyEnvPlan(const EnvPlan& plan, EnvSink& sink);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_WIRING_ENV_SINK_H_
