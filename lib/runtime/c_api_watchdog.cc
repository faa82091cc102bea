// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The C API's hang watchdog calls (dist_train.h, "hang watchdog").

#include "base/env.h"
#include "dist_train/dist_train.h"
#include "runtime/c_api_internal.h"
#include "runtime/progress.h"
#include "runtime/watchdog.h"

using dist_train::capi::Guard;

extern "C" {

int dt_watchdog_start(void) {
  return Guard("dt_watchdog_start", [] {
    return dist_train::StartWatchdogFromEnv(dist_train::ProcessEnv(), -1, -1);
  });
}

int dt_watchdog_running(void) { return dist_train::WatchdogRunning() ? 1 : 0; }

void dt_heartbeat(void) { dist_train::NoteHeartbeat(); }

int dt_watchdog_dump_signal(void) { return dist_train::WatchdogDumpSignal(); }

int dt_watchdog_dump_fd(void) { return dist_train::WatchdogDumpFd(); }

void dt_note_compute_ns(uint64_t nanoseconds) {
  dist_train::NoteComputeTime(nanoseconds);
}

}  // extern "C"
