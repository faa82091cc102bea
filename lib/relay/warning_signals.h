// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The signals that can serve as a preemption warning, as plugstack.conf
// (warning_signals=) and a job (DT_PREEMPT_SIGNAL) name them.

#ifndef DIST_TRAIN_LIB_RELAY_WARNING_SIGNALS_H_
#define DIST_TRAIN_LIB_RELAY_WARNING_SIGNALS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "dist_train/status.h"

namespace dist_train {

inline constexpr uint64_t SignalBit(int sig) {
  return uint64_t{1} << (sig - 1);
}

// Parses "USR1,USR2" (names with or without SIG; HUP QUIT USR1 USR2 ALRM URG
// XCPU VTALRM PROF WINCH PWR) into a mask. `what` (if any) prefixes errors.
Status ParseWarningSignals(std::string_view text, const std::string& what,
                           uint64_t* mask);

// "USR1,USR2" for a mask (inverse of ParseWarningSignals).
std::string FormatWarningSignals(uint64_t mask);

// The admin's warning signals plus the job's DT_PREEMPT_SIGNAL (null: unset)
// when it names one that can be a warning (TERM/INT keep their meaning).
uint64_t WithJobWarningSignal(uint64_t admin_mask,
                              const std::string* preempt_signal);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RELAY_WARNING_SIGNALS_H_
