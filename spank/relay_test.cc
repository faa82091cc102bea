// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay.h"

#include <gtest/gtest.h>

#include <csignal>

#include "fake_spank_host.h"

namespace dist_train {
namespace {

TEST(WarningMaskTest, AddsTheJobsSignalWhenItCanBeAWarning) {
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
    FakeSpankHost host;
    if (c.preempt_signal) host.env["DT_PREEMPT_SIGNAL"] = c.preempt_signal;
    PluginConfig cfg;
    cfg.warning_signals = c.admin;
    EXPECT_EQ(WarningMask(host, cfg), c.want)
        << (c.preempt_signal ? c.preempt_signal : "(unset)");
  }
}

}  // namespace
}  // namespace dist_train
