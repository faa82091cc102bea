// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "port.h"
#include "signal_relay.h"
#include "spank_env.h"

namespace dist_train {
namespace {

Proctrack ResolveProctrack(Proctrack configured) {
  if (configured != Proctrack::kAuto) return configured;
  std::ifstream f("/proc/self/cgroup");
  std::stringstream text;
  text << f.rdbuf();
  return DetectProctrack(text.str());
}

// The admin's warning signals plus the job's DT_PREEMPT_SIGNAL when it is
// one that can be a warning (TERM/INT keep their meaning).
uint64_t WarningMask(spank_t sp, const PluginConfig& cfg) {
  uint64_t mask = cfg.warning_signals, job = 0;
  std::string value;
  if (GetEnv(sp, "DT_PREEMPT_SIGNAL", &value) &&
      ParseWarningSignals(value, "", &job).ok()) {
    mask |= job;
  }
  return mask;
}

}  // namespace

void MaybeStartRelay(spank_t sp, const PluginState& st, const SlurmInputs& in,
                     bool verbose) {
  if (!st.options.enabled || !st.config.signal_relay ||
      in.step_id == kBatchStepId) {
    return;
  }
  RelayConfig cfg;
  cfg.proctrack = ResolveProctrack(st.config.proctrack);
  if (cfg.proctrack == Proctrack::kLinuxproc) return;  // Slurm reaches all
  if (!CanListChildren()) {
    if (in.local_task_id == 0) {
      fprintf(stderr,
              "dist-train: warning: this kernel does not list "
              "/proc/PID/task/TID/children; preemption warnings reach only "
              "what Slurm signals itself\n");
    }
    return;
  }
  cfg.warning_mask = WarningMask(sp, st.config);
  std::string relay_pid = std::to_string(getpid());
  spank_setenv(sp, kRelayVar, relay_pid.c_str(), 1);
  if (verbose) {
    fprintf(stderr,
            "dist-train: task %u: warning signals %s go to every process of "
            "the task that catches them (relay pid %s, proctrack/%s)\n",
            in.global_task_id, FormatWarningSignals(cfg.warning_mask).c_str(),
            relay_pid.c_str(), ProctrackName(cfg.proctrack));
  }
  fflush(stdout);
  fflush(stderr);
  pid_t relay = 0;
  Status s = StartSignalRelay(cfg, &relay);
  if (!s.ok()) {
    spank_unsetenv(sp, kRelayVar);
    fprintf(stderr, "dist-train: warning: no preemption relay: %s\n",
            s.message().c_str());
    return;
  }
  // Only the child gets here: it becomes the task Slurm execs.
  spank_setenv(sp, "SLURM_TASK_PID", std::to_string(getpid()).c_str(), 1);
}

}  // namespace dist_train
