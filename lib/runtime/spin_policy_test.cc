// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/spin_policy.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

// `n` waits, each ending as `while_spinning` says; returns how many spun long.
int Waits(SpinPolicy* p, int n, bool while_spinning) {
  int long_spins = 0;
  for (int i = 0; i < n; ++i) {
    long_spins += p->SpinLong();
    p->WaitEnded(while_spinning);
  }
  return long_spins;
}

TEST(SpinPolicyTest, SpinsLongWhileSpinningCatchesTheBarrier) {
  SpinPolicy p;
  EXPECT_EQ(Waits(&p, 1000, true), 1000);
  EXPECT_FALSE(p.short_mode());
}

TEST(SpinPolicyTest, MissesInARowShortenTheSpin) {
  SpinPolicy p;
  EXPECT_EQ(Waits(&p, SpinPolicy::kMissesToShorten - 1, false),
            SpinPolicy::kMissesToShorten - 1);
  EXPECT_FALSE(p.short_mode());
  EXPECT_EQ(Waits(&p, 1, false), 1);
  EXPECT_TRUE(p.short_mode());
  EXPECT_FALSE(p.SpinLong());
}

// The hierarchical all-reduce's pattern on a machine whose CPUs the ranks
// share with others: the local barrier caught, the one around the leaders'
// exchange missed.
TEST(SpinPolicyTest, HalfTheLongSpinsMissingShortensTheSpin) {
  SpinPolicy p;
  for (int i = 0; i < SpinPolicy::kWindow / 2; ++i) {
    ASSERT_FALSE(p.short_mode()) << i;
    Waits(&p, 1, true);
    Waits(&p, 1, false);
  }
  EXPECT_TRUE(p.short_mode());
}

TEST(SpinPolicyTest, AStragglerNowAndThenKeepsTheLongSpin) {
  SpinPolicy p;
  for (int i = 0; i < 100; ++i) {
    Waits(&p, 1, false);
    Waits(&p, 3, true);
    ASSERT_FALSE(p.short_mode()) << i;
  }
}

TEST(SpinPolicyTest, ShortModeProbesWithALongSpinNowAndThen) {
  SpinPolicy p;
  Waits(&p, SpinPolicy::kMissesToShorten, false);
  ASSERT_TRUE(p.short_mode());
  // Short waits that sleep anyway do not count; every kProbeEvery-th wait
  // spins long, and misses again.
  EXPECT_EQ(Waits(&p, 10 * SpinPolicy::kProbeEvery, false), 10);
  EXPECT_TRUE(p.short_mode());
}

TEST(SpinPolicyTest, ProbesThatCatchTheBarrierEndShortMode) {
  SpinPolicy p;
  Waits(&p, SpinPolicy::kMissesToShorten, false);
  ASSERT_TRUE(p.short_mode());
  int probes = 0;
  for (int i = 0; i < 100 * SpinPolicy::kProbeEvery && p.short_mode(); ++i) {
    probes += p.SpinLong();
    p.WaitEnded(true);  // short waits caught in a few looks say nothing
  }
  EXPECT_FALSE(p.short_mode());
  // Until the misses left the window: then fewer than half of it.
  EXPECT_EQ(probes, SpinPolicy::kWindow - SpinPolicy::kMissesToShorten + 1);
  EXPECT_EQ(Waits(&p, 100, true), 100);
}

}  // namespace
}  // namespace dist_train
