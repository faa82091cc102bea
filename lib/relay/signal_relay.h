// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The preemption-warning relay the SPANK plugin puts into every task of a
// --dist-train step (docs/preemption.md, "Delivery").
//
// Slurm 22.05 signals a step's "container": under proctrack/cgroup only the
// task processes themselves (children of slurmstepd), under proctrack/pgid
// task 0's process group. Workers a launcher started (torchrun starts them
// in their own sessions) never hear a `--signal=USR1@T` warning, and a
// launcher that does not handle it dies of it. The relay fixes that from
// inside the task:
//
//   task process (slurmstepd tracks it)  --fork-->  child: returns from
//   = the relay, never returns           (or clone  task_init, Slurm execs
//                                         sharing    the user's command in it
//                                         memory)
//
// The relay reads every catchable signal from a signalfd and
//   - a warning signal (USR1, USR2 by default): sends it to every descendant
//     that catches it (SigCgt) or waits for it (blocked, not ignored), and
//     to nobody else, so a launcher that ignores the warning is not killed;
//     under pgid Slurm already reached the task's own process group, so
//     only descendants in other groups get it from the relay;
//   - any other signal (TERM, INT, HUP, CONT, TSTP, ...): under cgroup to
//     the child, as Slurm would have; under pgid nothing (killpg reached it);
//   - the child's exit: reaps adopted orphans that already exited, then
//     exits with the child's code or dies of the child's signal (no core).
// After the fork the relay makes raw system calls only (async-signal-safe:
// the task process is a one-thread fork of a many-thread slurmstepd).

#ifndef DIST_TRAIN_LIB_RELAY_SIGNAL_RELAY_H_
#define DIST_TRAIN_LIB_RELAY_SIGNAL_RELAY_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "dist_train/status.h"
#include "relay/descendants.h"
#include "relay/proctrack.h"
#include "relay/warning_signals.h"

namespace dist_train {

struct RelayConfig {
  Proctrack proctrack = Proctrack::kCgroup;  // kAuto is resolved before
  // Bit (sig - 1) for each warning signal. Default: USR1 and USR2.
  uint64_t warning_mask = 0;
  // The child execs (or exits) soon, as a task does after task_init: it
  // then shares the relay's memory until it does (CLONE_VM|CLONE_VFORK: no
  // page tables copied, no copy-on-write faults, one address space torn
  // down at the end instead of two) and the relay sleeps until then. False:
  // a plain fork, for a child that goes on running this program.
  bool child_execs = false;
};

// The variable the plugin sets to the relay's pid for the task's processes.
inline constexpr char kRelayVar[] = "DT_SIGNAL_RELAY";

// Whether $DT_SIGNAL_RELAY names this process or an ancestor, i.e. a relay
// delivers warnings to it and its descendants (a launcher then need not
// forward them). Under proctrack/linuxproc, where Slurm itself signals every
// descendant and no relay runs, it names the task process itself.
// Inherited values from other steps name no ancestor.
bool UnderSignalRelay();

// Starts the relay: forks, or with config.child_execs clones a child that
// shares this memory until it execs. Returns OK in the child (which goes on
// to become the task) with *relay set to the relay's pid; the calling
// process never returns: it relays until the child exits and then exits the
// same way. An error means no child was started and the task runs without
// a relay.
Status StartSignalRelay(const RelayConfig& config, pid_t* relay);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RELAY_SIGNAL_RELAY_H_
