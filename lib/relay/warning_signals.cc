// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay/warning_signals.h"

#include <signal.h>

#include "base/parse.h"

namespace dist_train {
namespace {

struct NamedSignal {
  const char* name;
  int sig;
};

// Signals that may serve as a warning: none that stop, continue, end or
// interrupt a step (those keep Slurm's meaning), none the kernel raises.
constexpr NamedSignal kWarningSignals[] = {
    {"HUP", SIGHUP},     {"QUIT", SIGQUIT},     {"USR1", SIGUSR1},
    {"USR2", SIGUSR2},   {"ALRM", SIGALRM},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},   {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH}, {"PWR", SIGPWR}};

}  // namespace

Status ParseWarningSignals(std::string_view text, const std::string& what,
                           uint64_t* mask) {
  const std::string prefix = what.empty() ? "" : what + ": ";
  uint64_t out = 0;
  for (std::string_view word : Split(text, ',')) {
    std::string_view name = word;
    if (name.substr(0, 3) == "SIG") name.remove_prefix(3);
    int found = 0;
    for (const NamedSignal& s : kWarningSignals) {
      if (name == s.name) found = s.sig;
    }
    if (found == 0) {
      return Status::InvalidArgument(
          prefix + "'" + std::string(word) +
          "' cannot be a warning signal; use one or more of HUP, QUIT, USR1, "
          "USR2, ALRM, URG, XCPU, VTALRM, PROF, WINCH, PWR");
    }
    if (out & SignalBit(found)) {
      return Status::InvalidArgument(prefix + "'" + std::string(word) +
                                     "' given twice");
    }
    out |= SignalBit(found);
  }
  if (out == 0) return Status::InvalidArgument(prefix + "no signal given");
  *mask = out;
  return Status::OK();
}

std::string FormatWarningSignals(uint64_t mask) {
  std::string out;
  for (const NamedSignal& s : kWarningSignals) {
    if (mask & SignalBit(s.sig))
      out += (out.empty() ? "" : ",") + std::string(s.name);
  }
  return out;
}

uint64_t WithJobWarningSignal(uint64_t admin_mask,
                              const std::string* preempt_signal) {
  uint64_t job = 0;
  if (preempt_signal != nullptr &&
      ParseWarningSignals(*preempt_signal, "", &job).ok()) {
    admin_mask |= job;
  }
  return admin_mask;
}

}  // namespace dist_train
