// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Waiting until what this process wrote has left its pipe. Under srun a
// task's stdout and stderr are pipes that slurmstepd reads and forwards;
// lines a task writes just before it has the job requeued can be lost
// when the requeue kills the step before slurmstepd read them (seen in
// CI: a preflight report cut after its first line). Waiting until the pipe
// is empty, bounded, keeps them.

#ifndef DIST_TRAIN_LIB_BASE_OUTPUT_DRAIN_H_
#define DIST_TRAIN_LIB_BASE_OUTPUT_DRAIN_H_

namespace dist_train {

// Whether `fd` holds nothing unread: true at once when it is not a pipe
// (a file, a terminal, closed), else once the reader took everything,
// false after `seconds` with bytes still in the pipe.
bool WaitUntilOutputRead(int fd, double seconds);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_OUTPUT_DRAIN_H_
