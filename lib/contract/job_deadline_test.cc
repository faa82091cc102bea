// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/job_deadline.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

constexpr uint32_t kInfinite = 0xfffffffe;  // slurm.h
constexpr uint32_t kNoVal = 0xfffffffd;
constexpr int64_t kStart = 1800000000;
constexpr int64_t kYear = 365 * 24 * 3600;

TEST(JobDeadlineTest, WhatSlurmctldSaysOfAJob) {
  struct Case {
    const char* name;
    JobTimes times;
    int64_t deadline;
  };
  for (const Case& c : {
           Case{"an hour's limit", {60, kStart, kStart + 3600}, kStart + 3600},
           Case{"no limit", {kInfinite, kStart, kStart + kYear}, 0},
           // Requeued: the limit reset to NO_VAL, then backfill started the
           // job with YEAR_MINUTES (issue #13).
           Case{"no limit, requeued, started by backfill",
                {365 * 24 * 60, kStart, kStart + kYear},
                0},
           Case{"no limit, not yet filled in",
                {kNoVal, kStart, kStart + kYear},
                0},
           Case{"a limit longer than the year stand-in",
                {400 * 24 * 60, kStart, kStart + 400 * 24 * 3600},
                0},
           Case{"no limit, but preempted with a grace time",
                {kInfinite, kStart, kStart + 600},
                kStart + 600},
           Case{"a day's limit after `scontrol update TimeLimit`",
                {24 * 60, kStart, kStart + 24 * 3600},
                kStart + 24 * 3600},
           Case{"not started", {60, 0, 0}, 0},
           Case{"no record of the job", {}, 0},
       }) {
    EXPECT_EQ(JobDeadline(c.times), c.deadline) << c.name;
  }
}

}  // namespace
}  // namespace dist_train
