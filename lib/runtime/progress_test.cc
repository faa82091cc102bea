// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/progress.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace dist_train {
namespace {

class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override { SetProgressRecord(&record_); }
  void TearDown() override { SetProgressRecord(nullptr); }
  ProgressRecord record_;
};

TEST_F(ProgressTest, WithoutARecordNotesGoNowhere) {
  SetProgressRecord(nullptr);
  NoteHeartbeat();
  { CollectiveNote note(CallKind::kAllReduce); }
  EXPECT_EQ(Snapshot(record_), ProgressSnapshot{});
  EXPECT_EQ(SampleTiming(record_).steps, 0u);
}

TEST_F(ProgressTest, CollectivesAreStepsUntilTheFirstHeartbeat) {
  EXPECT_EQ(SampleTiming(record_).steps, 0u);
  {
    CollectiveNote note(CallKind::kBroadcast);
    ProgressSnapshot in = Snapshot(record_);
    EXPECT_TRUE(in.inside);
    EXPECT_EQ(in.call, CallKind::kBroadcast);
    usleep(20000);
  }
  TimingSample a = SampleTiming(record_);
  EXPECT_EQ(a.steps, 1u);
  EXPECT_GE(a.wait_ns, 20000000u);  // the collective's time is waiting
  EXPECT_FALSE(Snapshot(record_).inside);
  NoteHeartbeat();
  { CollectiveNote note(CallKind::kAllReduce); }
  { CollectiveNote note(CallKind::kAllReduce); }
  TimingSample b = SampleTiming(record_);
  EXPECT_EQ(b.steps, 1u);  // heartbeats now, and only heartbeats mark steps
  EXPECT_GT(b.now_ns, a.now_ns);
  EXPECT_EQ(Snapshot(record_).collectives, 3u);
}

TEST_F(ProgressTest, ASampleHoldsTheCountersAtTheEndOfTheLastStep) {
  NoteComputeTime(5000);
  NoteHeartbeat();
  TimingSample a = SampleTiming(record_);
  NoteComputeTime(7000);  // the next step, not ended yet
  { CollectiveNote note(CallKind::kAllReduce); }
  TimingSample b = SampleTiming(record_);
  EXPECT_EQ(b.now_ns, a.now_ns);
  EXPECT_EQ(b.compute_ns, 5000u);
  EXPECT_EQ(b.wait_ns, a.wait_ns);
  NoteHeartbeat();
  TimingSample c = SampleTiming(record_);
  EXPECT_EQ(c.steps, 2u);
  EXPECT_EQ(c.compute_ns, 12000u);
  EXPECT_GT(c.wait_ns, a.wait_ns);
}

}  // namespace
}  // namespace dist_train
