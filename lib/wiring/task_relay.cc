// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/task_relay.h"

#include <unistd.h>

#include <cstdio>

#include "base/slurm_ids.h"
#include "relay/signal_relay.h"

namespace dist_train {
namespace {

void SayNoChildren(const RelayTask& task) {
  if (task.local_task_id != 0) return;
  fprintf(stderr,
          "dist-train: warning: this kernel does not list "
          "/proc/PID/task/TID/children; preemption warnings reach only "
          "what Slurm signals itself\n");
}

void SayRelay(const RelayTask& task, const RelayConfig& cfg,
              const std::string& relay_pid) {
  if (!task.verbose) return;
  fprintf(stderr,
          "dist-train: task %u: warning signals %s go to every process of "
          "the task that catches them (relay pid %s, proctrack/%s)\n",
          task.global_task_id, FormatWarningSignals(cfg.warning_mask).c_str(),
          relay_pid.c_str(), ProctrackName(cfg.proctrack));
}

}  // namespace

void StartTaskRelay(const PluginConfig& pcfg, const RelayTask& task,
                    const std::string* preempt_signal, EnvSink& sink) {
  if (!pcfg.signal_relay || task.step_id == kBatchStepId) return;
  RelayConfig cfg;
  cfg.proctrack = ResolveProctrack(pcfg.proctrack);
  std::string relay_pid = std::to_string(getpid());
  if (cfg.proctrack == Proctrack::kLinuxproc) {
    // Slurm signals every process itself: launchers must not forward. No
    // variable only means launchers forward too: no reason to fail the task.
    sink.Set(kRelayVar, relay_pid).IgnoreError();
    return;
  }
  if (!CanListChildren()) return SayNoChildren(task);
  cfg.warning_mask = WithJobWarningSignal(pcfg.warning_signals, preempt_signal);
  cfg.child_execs = task.shares_memory;
  sink.Set(kRelayVar, relay_pid).IgnoreError();
  SayRelay(task, cfg, relay_pid);
  fflush(stdout);
  fflush(stderr);
  pid_t relay = 0;
  Status s = StartSignalRelay(cfg, &relay);
  if (!s.ok()) {
    sink.Unset(kRelayVar).IgnoreError();
    fprintf(stderr, "dist-train: warning: no preemption relay: %s\n",
            s.message().c_str());
    return;
  }
  // Only the child gets here: it becomes the task. SLURM_TASK_PID names
  // the relay; the program is this process.
  sink.SetTaskPid(std::to_string(getpid())).IgnoreError();
}

}  // namespace dist_train
