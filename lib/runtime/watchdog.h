// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The hang watchdog (docs/runtime.md, "Hang watchdog"): a small process
// forked from the worker that watches the worker's progress record
// (runtime/progress.h) in a shared page. A process of its own, so that a
// worker stopped by SIGSTOP, a debugger or a deadlock is still watched.
// When the worker has not progressed for `seconds`, the watchdog asks it
// for its stacks (the dump signal: a native backtrace, or Python's
// faulthandler for every thread when the Python package registered it),
// writes them and the rank's record into the step's watchdog directory on
// shared storage, rank 0's watchdog gathers every rank's record into one
// summary (runtime/hang_report.h) on the job's stderr and in summary.txt,
// and then every watchdog kills its worker with SIGKILL, which ends the
// step. It exits by itself when the worker exits.
//
// Meanwhile it times the worker's steps (runtime/step_stats.h): every poll
// it writes the rank's live record (rank-R.live, what dt-status shows), and
// rank 0's watchdog names stragglers on the job's stderr and in
// stragglers.txt.

#ifndef DIST_TRAIN_LIB_RUNTIME_WATCHDOG_H_
#define DIST_TRAIN_LIB_RUNTIME_WATCHDOG_H_

#include <string>

#include "base/env.h"
#include "contract/options.h"
#include "dist_train/status.h"
#include "runtime/node_exclusion.h"
#include "runtime/step_stats.h"

namespace dist_train {

struct WatchdogOptions {
  // No progress for this long is a hang (DT_WATCHDOG); 0: no watchdog.
  double seconds = 0;
  // Where stacks, records and the summary go: DT_WATCHDOG_DIR, else
  // SLURM_SUBMIT_DIR, else the working directory; in it, one directory
  // per step, WatchdogStepDirName (made 0700, must be ours).
  std::string dir;
  int rank = 0;        // given, else RANK, else SLURM_PROCID, else 0
  int world_size = 1;  // given, else WORLD_SIZE, else SLURM_NTASKS, else 1
  std::string host;    // SLURMD_NODENAME, else the host name
  // How often the watchdog looks and writes the live record: 0.1 s, and
  // 0.1 s more per 16 ranks beyond 16 (rank 0 reads every record), at
  // most 2 s.
  double poll_seconds = 0.1;
  uint64_t window_steps = 8;  // a step-time window: at least this many steps
  StragglerOptions straggler;
  // After a hang, rank 0's watchdog requeues the job without the hosts of
  // the ranks that hung (DT_WATCHDOG_POLICY=requeue; "fail", the default:
  // the step ends, nothing more), at most DT_MAX_REQUEUES times.
  bool requeue = false;
  RequeueOps requeue_ops = SlurmRequeueOps();
  double dump_seconds = 2;     // how long the worker gets to write its stacks
  double gather_seconds = 20;  // how long rank 0 waits for all records
};

// Where a step's watchdog directories begin (dt-status finds them so).
constexpr const char* kWatchdogDirPrefix = "dist-train-watchdog-";

// "dist-train-watchdog-JOB.STEP", and ".rN" after it on the Nth requeued
// run of the job (SLURM_RESTART_COUNT): a requeued job numbers its steps
// from 0 again, and its records, summary and stacks must not meet the
// run before's, which stay for the post-mortem.
std::string WatchdogStepDirName(const std::string& job, const std::string& step,
                                uint64_t restarts);

// The options from the environment; `rank` >= 0 and `world_size` > 0 win
// over it. Seconds 0 (and nothing else read) when DT_WATCHDOG is unset;
// errors name the variable.
Status ReadWatchdogOptions(const EnvMap& env, int rank, int world_size,
                           WatchdogOptions* options);

// Starts this process's watchdog, once: later calls return OK and change
// nothing. Makes the step directory first, so a bad place fails here.
Status StartWatchdog(const WatchdogOptions& options);

// Reads the environment and starts the watchdog when DT_WATCHDOG is set
// (rank and world_size as for ReadWatchdogOptions).
Status StartWatchdogFromEnv(const EnvMap& env, int rank, int world_size);

// Writes `text` as file `name` into the step's watchdog directory (made
// when missing) when the environment asks for a watchdog; OK and nothing
// when it does not. dt-preflight keeps its report there for dt-status.
Status SaveInWatchdogDir(const EnvMap& env, const std::string& name,
                         const std::string& text);

bool WatchdogRunning();
// The signal the watchdog sends for a stack dump (SIGRTMIN + 4), and the
// file descriptor the dump goes to (-1 when no watchdog runs). A handler
// of one's own (Python's faulthandler.register) may write there instead.
int WatchdogDumpSignal();
int WatchdogDumpFd();

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_WATCHDOG_H_
