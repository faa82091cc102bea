// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay/warning_signals.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace dist_train {
namespace {

TEST(WarningSignalsTest, ParsesWarningSignals) {
  uint64_t mask = 0;
  ASSERT_TRUE(ParseWarningSignals("USR1,SIGUSR2", "x", &mask).ok());
  EXPECT_EQ(mask, SignalBit(SIGUSR1) | SignalBit(SIGUSR2));
  EXPECT_EQ(FormatWarningSignals(mask), "USR1,USR2");
  EXPECT_EQ(
      ParseWarningSignals("USR1,TERM", "plugstack: warning_signals", &mask)
          .message(),
      "plugstack: warning_signals: 'TERM' cannot be a warning signal; "
      "use one or more of HUP, QUIT, USR1, USR2, ALRM, URG, XCPU, "
      "VTALRM, PROF, WINCH, PWR");
  EXPECT_EQ(ParseWarningSignals("USR1,USR1", "w", &mask).message(),
            "w: 'USR1' given twice");
  EXPECT_FALSE(ParseWarningSignals("", "w", &mask).ok());
  EXPECT_FALSE(ParseWarningSignals("KILL", "w", &mask).ok());
  EXPECT_EQ(mask, SignalBit(SIGUSR1) | SignalBit(SIGUSR2));  // untouched
}

TEST(WarningSignalsTest, TheJobsSignalJoinsWhenItCanBeAWarning) {
  const uint64_t usr = SignalBit(SIGUSR1) | SignalBit(SIGUSR2);
  struct Case {
    const char* preempt_signal;  // DT_PREEMPT_SIGNAL; nullptr = unset
    uint64_t admin, want;
  } cases[] = {
      {nullptr, usr, usr},
      {"HUP", usr, usr | SignalBit(SIGHUP)},
      {"SIGALRM", usr, usr | SignalBit(SIGALRM)},
      {"USR1", usr, usr},
      {"PWR", SignalBit(SIGUSR1), SignalBit(SIGUSR1) | SignalBit(SIGPWR)},
      {"XCPU,WINCH", 0, SignalBit(SIGXCPU) | SignalBit(SIGWINCH)},
      // TERM/INT keep their meaning; junk is ignored, not fatal.
      {"TERM", usr, usr},
      {"INT", usr, usr},
      {"bogus", usr, usr},
      {"", usr, usr},
      {"HUP,TERM", usr, usr},
  };
  for (const Case& c : cases) {
    std::string value = c.preempt_signal ? c.preempt_signal : "";
    EXPECT_EQ(
        WithJobWarningSignal(c.admin, c.preempt_signal ? &value : nullptr),
        c.want)
        << (c.preempt_signal ? c.preempt_signal : "(unset)");
  }
}

}  // namespace
}  // namespace dist_train
