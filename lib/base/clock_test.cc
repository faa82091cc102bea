// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/clock.h"

#include <gtest/gtest.h>
#include <time.h>

namespace dist_train {
namespace {

TEST(ClockTest, AdvancesBySleptTime) {
  double start = MonotonicSeconds();
  timespec nap{0, 20 * 1000 * 1000};
  nanosleep(&nap, nullptr);
  double slept = MonotonicSeconds() - start;
  EXPECT_GE(slept, 0.02);
  EXPECT_LT(slept, 5.0);
}

TEST(ClockTest, NeverGoesBack) {
  double last = MonotonicSeconds();
  for (int i = 0; i < 1000; ++i) {
    double now = MonotonicSeconds();
    ASSERT_GE(now, last);
    last = now;
  }
}

}  // namespace
}  // namespace dist_train
