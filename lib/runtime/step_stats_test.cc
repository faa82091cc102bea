// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/step_stats.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

constexpr uint64_t kMs = 1000000;

TimingSample Sample(uint64_t now_ms, uint64_t steps, uint64_t wait_ms,
                    uint64_t compute_ms = 0) {
  TimingSample t;
  t.now_ns = now_ms * kMs;
  t.steps = steps;
  t.wait_ns = wait_ms * kMs;
  t.compute_ns = compute_ms * kMs;
  return t;
}

TEST(MeasureWindowTest, ComputeIsTimeOutsideCollectives) {
  StepWindow w;
  ASSERT_TRUE(MeasureWindow(Sample(1000, 10, 50), Sample(1240, 20, 90), 5, &w));
  EXPECT_EQ(w.steps, 10u);
  EXPECT_DOUBLE_EQ(w.step_ms, 24);
  EXPECT_DOUBLE_EQ(w.compute_ms, 20);  // (240 - 40) / 10
}

TEST(MeasureWindowTest, ReportedComputeWins) {
  StepWindow w;
  ASSERT_TRUE(
      MeasureWindow(Sample(0, 0, 0, 100), Sample(500, 10, 0, 250), 5, &w));
  EXPECT_DOUBLE_EQ(w.compute_ms, 15);
}

TEST(MeasureWindowTest, StaysOpenUntilEnoughSteps) {
  StepWindow w;
  EXPECT_FALSE(MeasureWindow(Sample(0, 10, 0), Sample(900, 14, 0), 5, &w));
  EXPECT_FALSE(MeasureWindow(Sample(0, 10, 0), Sample(0, 20, 0), 5, &w));
  EXPECT_TRUE(MeasureWindow(Sample(0, 10, 0), Sample(900, 15, 0), 5, &w));
}

LiveRecord Live(int rank, double compute_ms, uint64_t windows) {
  LiveRecord r;
  r.rank = rank;
  r.host = "node" + std::to_string(rank + 1);
  r.pid = 100 + rank;
  r.steps = windows * 10;
  r.windows = windows;
  r.compute_ms = compute_ms;
  r.step_ms = 24;
  return r;
}

TEST(LiveRecordTest, RoundTrips) {
  LiveRecord r = Live(3, 20.125, 7);
  r.collectives = 140;
  r.idle_seconds = 1.5;
  r.watchdog_seconds = 30;
  r.updated = 1700000000;
  r.ended = true;
  LiveRecord back;
  ASSERT_TRUE(DecodeLiveRecord(EncodeLiveRecord(r), &back));
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.host, "node4");
  EXPECT_EQ(back.pid, 103);
  EXPECT_EQ(back.steps, 70u);
  EXPECT_EQ(back.collectives, 140u);
  EXPECT_DOUBLE_EQ(back.compute_ms, 20.125);
  EXPECT_DOUBLE_EQ(back.idle_seconds, 1.5);
  EXPECT_EQ(back.watchdog_seconds, 30);
  EXPECT_EQ(back.updated, 1700000000);
  EXPECT_TRUE(back.ended);
}

TEST(LiveRecordTest, NoWindowYetRoundTrips) {
  LiveRecord back;
  ASSERT_TRUE(DecodeLiveRecord(EncodeLiveRecord(Live(0, -1, 0)), &back));
  EXPECT_LT(back.compute_ms, 0);
}

TEST(LiveRecordTest, RefusesDamagedRecords) {
  std::string good = EncodeLiveRecord(Live(1, 2, 3));
  LiveRecord r;
  EXPECT_FALSE(DecodeLiveRecord(good.substr(0, good.size() / 2), &r));
  EXPECT_FALSE(DecodeLiveRecord(good + "extra=1\n", &r));
  EXPECT_FALSE(DecodeLiveRecord("", &r));
  std::string bad = good;
  bad.replace(bad.find("rank=1"), 6, "rank=-1");
  EXPECT_FALSE(DecodeLiveRecord(bad, &r));
}

TEST(StragglerTrackerTest, NamesARankTwentyPercentSlowAfterThreeWindows) {
  StragglerTracker t;
  std::string out;
  for (uint64_t w = 1; w <= 2; ++w) {
    out = t.Update(
        {Live(0, 20, w), Live(1, 20.2, w), Live(2, 24, w), Live(3, 19.9, w)});
    EXPECT_EQ(out, "") << "window " << w;
  }
  out = t.Update(
      {Live(0, 20, 3), Live(1, 20.2, 3), Live(2, 24, 3), Live(3, 19.9, 3)});
  EXPECT_EQ(out,
            "dist-train: straggler: rank 2 on node3 (pid 102): 24.0 ms of "
            "compute per step, 20 % over the other ranks' median of 20.0 ms, "
            "3 windows in a row (at step 30)\n");
  EXPECT_EQ(t.named(), std::set<int>{2});
}

TEST(StragglerTrackerTest, ASeenRecordCountsOnce) {
  StragglerTracker t;
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(t.Update({Live(0, 20, 1), Live(1, 30, 1)}), "");
  EXPECT_TRUE(t.named().empty());
}

TEST(StragglerTrackerTest, OverInTwoWindowsOutOfThreeIsNotNamed) {
  StragglerTracker t;
  t.Update({Live(0, 20, 1), Live(1, 20, 1), Live(2, 25, 1)});
  t.Update({Live(0, 20, 2), Live(1, 20, 2), Live(2, 20.5, 2)});
  t.Update({Live(0, 20, 3), Live(1, 20, 3), Live(2, 25, 3)});
  EXPECT_TRUE(t.named().empty());
}

TEST(StragglerTrackerTest, NineAndAHalfPercentIsNotNamed) {
  StragglerTracker t;
  for (uint64_t w = 1; w <= 6; ++w)
    t.Update({Live(0, 20, w), Live(1, 20, w), Live(2, 21.9, w)});
  EXPECT_TRUE(t.named().empty());
}

TEST(StragglerTrackerTest, TinyComputeTimesNeedAnAbsoluteGap) {
  StragglerTracker t;  // 0.05 vs 0.08 ms: 60 % but timer noise
  for (uint64_t w = 1; w <= 6; ++w)
    t.Update({Live(0, 0.05, w), Live(1, 0.05, w), Live(2, 0.08, w)});
  EXPECT_TRUE(t.named().empty());
}

TEST(StragglerTrackerTest, TwoRanksCompareWithEachOther) {
  StragglerTracker t;
  std::string out;
  for (uint64_t w = 1; w <= 3; ++w)
    out = t.Update({Live(0, 20, w), Live(1, 24, w)});
  EXPECT_EQ(t.named(), std::set<int>{1});
  EXPECT_NE(out.find("rank 1 on node2"), std::string::npos) << out;
}

TEST(StragglerTrackerTest, ClearsARankThatCaughtUp) {
  StragglerTracker t;
  uint64_t w = 1;
  for (; w <= 3; ++w)
    t.Update({Live(0, 20, w), Live(1, 20, w), Live(2, 30, w)});
  ASSERT_EQ(t.named(), std::set<int>{2});
  std::string out;
  for (int i = 0; i < 3; ++i, ++w)
    out = t.Update({Live(0, 20, w), Live(1, 20, w), Live(2, 20, w)});
  EXPECT_TRUE(t.named().empty());
  EXPECT_NE(out.find("rank 2 on node3 (pid 102) is no longer behind"),
            std::string::npos)
      << out;
}

TEST(StragglerTrackerTest, EndedRanksAndRanksWithoutWindowsAreLeftOut) {
  StragglerTracker t;
  LiveRecord ended = Live(2, 40, 1);
  ended.ended = true;
  for (uint64_t w = 1; w <= 4; ++w) {
    ended.windows = w;
    t.Update({Live(0, 20, w), Live(1, -1, w), ended});
  }
  EXPECT_TRUE(t.named().empty());
}

TEST(OthersMedianTest, LeavesTheRankOut) {
  std::vector<LiveRecord> rs = {Live(0, 10, 1), Live(1, 20, 1), Live(2, 90, 1),
                                Live(3, 30, 1)};
  EXPECT_DOUBLE_EQ(OthersMedianMs(rs, 2), 20);
  EXPECT_DOUBLE_EQ(OthersMedianMs(rs, 0), 30);
  EXPECT_DOUBLE_EQ(OthersMedianMs({Live(0, 10, 1)}, 0), -1);
}

}  // namespace
}  // namespace dist_train
