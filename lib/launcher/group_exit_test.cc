// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/group_exit.h"

#include <gtest/gtest.h>

#include "dist_train/preemption.h"

namespace dist_train {
namespace {

TEST(GroupExitTest, AllZeroIsSuccess) {
  GroupOutcome o = SummarizeGroup({0, 0, 0}, /*warned=*/true);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_FALSE(o.preempted);
  EXPECT_FALSE(o.restartable);
}

TEST(GroupExitTest, PreemptedWhenEveryWorkerStoppedForIt) {
  for (bool warned : {false, true}) {
    GroupOutcome o = SummarizeGroup({kPreemptedExitCode, 0, 75}, warned);
    EXPECT_EQ(o.exit_code, 75);
    EXPECT_TRUE(o.preempted);
    EXPECT_FALSE(o.restartable);
  }
}

TEST(GroupExitTest, FirstFailureWinsAndRestartsOnlyWithoutWarning) {
  GroupOutcome o = SummarizeGroup({75, 3, 143}, /*warned=*/false);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_FALSE(o.preempted);
  EXPECT_TRUE(o.restartable);
  o = SummarizeGroup({0, 128 + 10}, /*warned=*/true);  // died of USR1
  EXPECT_EQ(o.exit_code, 138);
  EXPECT_FALSE(o.restartable);
  EXPECT_TRUE(IsFailureCode(1));
  EXPECT_FALSE(IsFailureCode(75));
  EXPECT_FALSE(IsFailureCode(0));
}

}  // namespace
}  // namespace dist_train
