// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/yield_policy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace dist_train {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// A clock the test moves; starts well after the epoch.
struct FakeTime {
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
  // One yield of policy `p` that lasts `d`; returns its end.
  Clock::time_point Yield(YieldPolicy* p, Clock::duration d) {
    Clock::time_point before = now;
    now += d;
    p->Yielded(before, now);
    return now;
  }
};

constexpr auto kShort = microseconds(20);
constexpr auto kLong = milliseconds(4);  // one tick lost to a busy process

TEST(YieldPolicyTest, ShortYieldsGoOnUpToTheLimitOfAWait) {
  YieldPolicy p;
  FakeTime t;
  p.StartWait();
  for (uint64_t i = 0; i < YieldPolicy::kMaxYields; ++i) {
    ASSERT_TRUE(p.MayYield(t.now)) << i;
    t.Yield(&p, kShort);
  }
  EXPECT_FALSE(p.MayYield(t.now));
  p.StartWait();
  EXPECT_TRUE(p.MayYield(t.now));
}

TEST(YieldPolicyTest, ALoneLongYieldEndsOnlyItsOwnWait) {
  YieldPolicy p;
  FakeTime t;
  p.StartWait();
  t.Yield(&p, kLong);
  EXPECT_FALSE(p.MayYield(t.now));  // sleeps for the rest of this wait
  t.now += milliseconds(1);
  p.StartWait();
  EXPECT_TRUE(p.MayYield(t.now));  // a niced job's slice now and then
  EXPECT_EQ(p.backoff_until(), Clock::time_point{});
}

TEST(YieldPolicyTest, LongYieldsFarApartStartNoBackoff) {
  YieldPolicy p;
  FakeTime t;
  for (int i = 0; i < 10; ++i) {
    p.StartWait();
    t.Yield(&p, kLong);
    t.now += YieldPolicy::kLongYieldsApart + milliseconds(1);
    p.StartWait();
    EXPECT_TRUE(p.MayYield(t.now)) << i;
  }
}

TEST(YieldPolicyTest, TwoLongYieldsCloseTogetherStartABackoff) {
  YieldPolicy p;
  FakeTime t;
  p.StartWait();
  t.Yield(&p, kLong);
  t.now += milliseconds(10);
  p.StartWait();
  Clock::time_point end = t.Yield(&p, kLong);
  EXPECT_EQ(p.backoff_until(), end + YieldPolicy::kFirstBackoff);
  p.StartWait();
  EXPECT_FALSE(p.MayYield(end + YieldPolicy::kFirstBackoff - milliseconds(1)));
  EXPECT_TRUE(p.MayYield(end + YieldPolicy::kFirstBackoff));
}

TEST(YieldPolicyTest, AFailedProbeDoublesTheBackoffUpToTheMaximum) {
  YieldPolicy p;
  FakeTime t;
  p.StartWait();
  t.Yield(&p, kLong);
  p.StartWait();
  t.Yield(&p, kLong);
  auto expected =
      std::chrono::duration_cast<Clock::duration>(YieldPolicy::kFirstBackoff);
  for (int i = 0; i < 8; ++i) {
    t.now = p.backoff_until();  // the backoff ends; the next wait probes
    p.StartWait();
    ASSERT_TRUE(p.MayYield(t.now));
    t.Yield(&p, kShort);  // a few yields still go to a sibling
    Clock::time_point end = t.Yield(&p, kLong);
    expected =
        std::min<Clock::duration>(expected * 2, YieldPolicy::kMaxBackoff);
    EXPECT_EQ(p.backoff_until(), end + expected) << i;
  }
  EXPECT_EQ(expected, YieldPolicy::kMaxBackoff);
}

TEST(YieldPolicyTest, ABackoffLongPastStartsOverAtTheFirstLength) {
  YieldPolicy p;
  FakeTime t;
  for (int i = 0; i < 3; ++i) {  // a backoff, then a failed probe
    p.StartWait();
    t.Yield(&p, kLong);
    if (i > 0) t.now = p.backoff_until();
  }
  t.now = p.backoff_until() + std::chrono::seconds(5);  // the machine calmed
  p.StartWait();
  t.Yield(&p, kLong);  // a lone one: nothing
  EXPECT_LT(p.backoff_until(), t.now);
  p.StartWait();
  EXPECT_TRUE(p.MayYield(t.now));
  Clock::time_point end = t.Yield(&p, kLong);  // busy again
  EXPECT_EQ(p.backoff_until(), end + YieldPolicy::kFirstBackoff);
}

TEST(YieldPolicyTest, AYieldJustOverTheThresholdCountsAsLong) {
  YieldPolicy p;
  FakeTime t;
  p.StartWait();
  t.Yield(&p, YieldPolicy::kLongYield);
  EXPECT_TRUE(p.MayYield(t.now));
  t.Yield(&p, YieldPolicy::kLongYield + microseconds(1));
  EXPECT_FALSE(p.MayYield(t.now));
}

std::vector<int64_t> Naps(NapSchedule* s, int k) {
  std::vector<int64_t> ms;
  for (int i = 0; i < k; ++i) ms.push_back(s->Next().count());
  return ms;
}

TEST(NapScheduleTest, WithACpuPerRankEveryNapIsTenMilliseconds) {
  NapSchedule s(8, 8);
  EXPECT_EQ(Naps(&s, 4), (std::vector<int64_t>{10, 10, 10, 10}));
  NapSchedule four_on_two(4, 2);
  EXPECT_EQ(Naps(&four_on_two, 3), (std::vector<int64_t>{10, 10, 10}));
}

TEST(NapScheduleTest, ManyRanksPerCpuNapLongerTheLongerAWaitLasts) {
  NapSchedule s(1024, 2);  // limit 512 ms
  EXPECT_EQ(s.limit().count(), 512);
  EXPECT_EQ(Naps(&s, 8),
            (std::vector<int64_t>{10, 20, 40, 80, 160, 320, 512, 512}));
  s.StartWait();  // a new wait starts short again
  EXPECT_EQ(Naps(&s, 2), (std::vector<int64_t>{10, 20}));
}

TEST(NapScheduleTest, TheLongestNapIsOneSecond) {
  NapSchedule s(100000, 1);
  EXPECT_EQ(s.limit().count(), 1000);
  NapSchedule no_cpus_known(64, 0);  // sysconf failed: as one CPU
  EXPECT_EQ(no_cpus_known.limit().count(), 64);
}

}  // namespace
}  // namespace dist_train
