// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/slurm_ids.h"
#include "relay/signal_relay.h"
#include "spank_env.h"

namespace dist_train {

uint64_t WarningMask(SpankHost& host, const PluginConfig& cfg) {
  std::string value;
  bool set = GetEnv(host, "DT_PREEMPT_SIGNAL", &value);
  return WithJobWarningSignal(cfg.warning_signals, set ? &value : nullptr);
}

void MaybeStartRelay(SpankHost& host, const PluginState& st,
                     const RelayTask& task) {
  if (!st.options.enabled || !st.config.signal_relay ||
      task.step_id == kBatchStepId) {
    return;
  }
  RelayConfig cfg;
  cfg.proctrack = ResolveProctrack(st.config.proctrack);
  if (cfg.proctrack == Proctrack::kLinuxproc) {
    // Slurm signals every process itself: launchers must not forward.
    host.SetEnv(kRelayVar, std::to_string(getpid()).c_str(), 1);
    return;
  }
  if (!CanListChildren()) {
    if (task.local_task_id == 0) {
      fprintf(stderr,
              "dist-train: warning: this kernel does not list "
              "/proc/PID/task/TID/children; preemption warnings reach only "
              "what Slurm signals itself\n");
    }
    return;
  }
  cfg.warning_mask = WarningMask(host, st.config);
  cfg.child_execs = true;  // Slurm execs the task's command next
  std::string relay_pid = std::to_string(getpid());
  host.SetEnv(kRelayVar, relay_pid.c_str(), 1);
  if (task.verbose) {
    fprintf(stderr,
            "dist-train: task %u: warning signals %s go to every process of "
            "the task that catches them (relay pid %s, proctrack/%s)\n",
            task.global_task_id, FormatWarningSignals(cfg.warning_mask).c_str(),
            relay_pid.c_str(), ProctrackName(cfg.proctrack));
  }
  fflush(stdout);
  fflush(stderr);
  pid_t relay = 0;
  Status s = StartSignalRelay(cfg, &relay);
  if (!s.ok()) {
    host.UnsetEnv(kRelayVar);
    fprintf(stderr, "dist-train: warning: no preemption relay: %s\n",
            s.message().c_str());
    return;
  }
  // Only the child gets here: it becomes the task Slurm execs. Slurm set
  // SLURM_TASK_PID to the relay's pid; the child's has as many digits but
  // after a wrap to a longer pid. Overwritten in place: spank_setenv
  // xmallocs and zeroes a quarter MiB (Slurm's setenvf), which in a forked
  // child were ~64 copy-on-write faults (a third of what the forked relay
  // cost a step, under perf).
  std::string task_pid = std::to_string(getpid());
  if (!host.OverwriteEnv("SLURM_TASK_PID", task_pid.c_str()))
    host.SetEnv("SLURM_TASK_PID", task_pid.c_str(), 1);
}

}  // namespace dist_train
