// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// A task's descendants, found by walking /proc/PID/task/TID/children, and
// what they want of a signal: the part of the relay that reads /proc.
// Async-signal-safe (no allocation, no lock): the relay calls it after its
// fork.

#ifndef DIST_TRAIN_LIB_RELAY_DESCENDANTS_H_
#define DIST_TRAIN_LIB_RELAY_DESCENDANTS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace dist_train {

// Signal masks of /proc/PID/status text. Async-signal-safe (no allocation).
struct SignalMasks {
  uint64_t caught = 0, blocked = 0, ignored = 0;
};
bool ParseStatusMasks(const char* text, size_t len, SignalMasks* out);

// Whether a process with these masks wants signal `sig` delivered: it has a
// handler, or blocks it without ignoring it (sigwait/signalfd users).
bool WantsSignal(const SignalMasks& m, int sig);

// Whether this kernel lists children in /proc/PID/task/TID/children, which
// the relay walks to find descendants.
bool CanListChildren();

// Sends `sig` to every descendant of this process that wants it, once;
// with `skip_own_group` not to those in this process group (under pgid
// Slurm's killpg reached them).
void ForwardWarning(int sig, bool skip_own_group);

// The parent of `pid` from /proc/PID/stat, -1 when unknown.
pid_t ParentOf(pid_t pid);

// Whether `ancestor` is among the first `max_depth` ancestors of `pid`.
bool HasAncestor(pid_t pid, pid_t ancestor, int max_depth);

// Whether `pid` is a descendant of this process.
bool IsDescendant(pid_t pid);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RELAY_DESCENDANTS_H_
