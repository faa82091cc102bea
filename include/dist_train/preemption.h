// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Stopping together, checkpointing atomically, requeueing: the runtime side
// of preemption.
//
//   dist_train::InstallStopHandler();           // DT_PREEMPT_SIGNAL or USR1
//   for (uint64_t step = start; ; ++step) {
//     train_one_step();
//     bool stop = false;
//     dist_train::AgreeToStop(comm.get(), &stop);  // every rank, same step
//     if (stop) {
//       dist_train::SaveCheckpoint(comm.get(), dir, step, my_state);
//       dist_train::RequeueJob();
//       return 0;
//     }
//   }
//
// The signal handler only records (checkpointing inside a handler hangs).

#ifndef DIST_TRAIN_PREEMPTION_H_
#define DIST_TRAIN_PREEMPTION_H_

#include <cstdint>
#include <string>

#include "dist_train/export.h"
#include "dist_train/runtime.h"
#include "dist_train/status.h"

namespace dist_train {

// The exit status of a worker that stopped because of preemption (after
// checkpointing): EX_TEMPFAIL, "try again later". dt-run passes it on when
// every worker ended with 0 or this, and does not restart the group.
inline constexpr int kPreemptedExitCode = 75;

// Installs a handler for `signal` (0: DT_PREEMPT_SIGNAL, e.g. "USR1", else
// SIGUSR1) that only sets a flag. Errors name a bad DT_PREEMPT_SIGNAL.
DT_EXPORT Status InstallStopHandler(int signal = 0);

// This process received the stop signal (or RequestStop was called).
DT_EXPORT bool StopRequested();
DT_EXPORT void RequestStop();
// Forgets a stop request (e.g. when the job cannot be requeued and training
// goes on after the checkpoint).
DT_EXPORT void ClearStopRequest();

// Collective: *stop is true on every rank when any rank has a stop request,
// so all ranks stop after the same step.
DT_EXPORT Status AgreeToStop(Communicator* comm, bool* stop);

// Collective: writes this rank's `data` for `step` under `dir` atomically
// (temp file, fsync, rename), waits for every rank, then rank 0 marks the
// step complete (dir/LATEST, also atomic). A step is never marked before all
// of its ranks' files are durable. Files are created mode 0600 with
// O_EXCL | O_NOFOLLOW under an unpredictable temp name, directories mode
// 0700; `dir` (made if missing) and its step directories must be this
// user's, not symlinks, and not writable by every user unless sticky, else
// every rank fails with an error naming the directory, its owner or mode.
DT_EXPORT Status SaveCheckpoint(Communicator* comm, const std::string& dir,
                                uint64_t step, const std::string& data);

// The latest complete step under `dir` and this rank's data for it.
// NotFound when there is none; a damaged file is an error, never data.
// Nothing is read through a symlink, from a file that is not regular or not
// this user's, or from a directory SaveCheckpoint would refuse; LATEST over
// 32 bytes, or a header length other than the file's, is damage.
DT_EXPORT Status LoadLatestCheckpoint(const std::string& dir, int rank,
                                      uint64_t* step, std::string* data);

// Seconds until the job's time limit: asked live from slurmctld (so it
// follows requeues and `scontrol update TimeLimit`), else DT_JOB_DEADLINE
// (set by the plugin at step start) minus now. NotFound outside a Slurm
// job or when the job has no limit.
DT_EXPORT Status JobSecondsLeft(int64_t* seconds);

// Requeues this job (this array task) through libslurm, no scontrol needed.
// Refused once SLURM_RESTART_COUNT reached `max_requeues` (< 0: take
// DT_MAX_REQUEUES, unlimited when unset).
DT_EXPORT Status RequeueJob(int max_requeues = -1);

}  // namespace dist_train

#endif  // DIST_TRAIN_PREEMPTION_H_
