// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay/descendants.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace dist_train {
namespace {

TEST(DescendantsTest, ParsesStatusMasks) {
  const char kStatus[] =
      "Name:\tpython3\nState:\tS (sleeping)\nSigQ:\t0/63438\n"
      "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
      "SigBlk:\t0000000000000800\nSigIgn:\t0000000001001000\n"
      "SigCgt:\t0000000180000202\nCapInh:\t0000000000000000\n";
  SignalMasks m;
  ASSERT_TRUE(ParseStatusMasks(kStatus, sizeof(kStatus) - 1, &m));
  EXPECT_EQ(m.blocked, 0x800u);  // SIGUSR2 (12)
  EXPECT_EQ(m.ignored, 0x1001000u);
  EXPECT_EQ(m.caught, 0x180000202u);  // INT, USR1 (10), ...
  EXPECT_TRUE(WantsSignal(m, SIGUSR1));
  EXPECT_TRUE(WantsSignal(m, SIGUSR2));   // blocked, not ignored: sigwait
  EXPECT_FALSE(WantsSignal(m, SIGHUP));   // default action: would kill
  EXPECT_FALSE(WantsSignal(m, SIGPIPE));  // ignored (bit 13)
  // posix_spawn / subprocess block everything for a moment: not a waiter
  SignalMasks spawning{0x4002, 0xfffffffe7ffbfeffULL, 0x1000};
  EXPECT_FALSE(WantsSignal(spawning, SIGUSR1));
  EXPECT_TRUE(WantsSignal(spawning, SIGINT));  // caught
  SignalMasks none;
  EXPECT_FALSE(ParseStatusMasks("Name:\tx\n", 8, &none));
  // a last line cut off by the read, and short values, are not trusted
  const char kCut[] =
      "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
      "SigCgt:\t000000000000020";
  EXPECT_FALSE(ParseStatusMasks(kCut, sizeof(kCut) - 1, &none));
  const char kShort[] =
      "SigBlk:\t0\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000000200\n";
  EXPECT_FALSE(ParseStatusMasks(kShort, sizeof(kShort) - 1, &none));
  EXPECT_FALSE(
      ParseStatusMasks("SigBlk:\tzz\nSigIgn:\t0\nSigCgt:\t0\n", 29, &none));
}

}  // namespace
}  // namespace dist_train
