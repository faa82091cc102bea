// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/port.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace dist_train {
namespace {

constexpr uint16_t kMin = 20000, kMax = 32767;

TEST(DerivePortTest, StaysInRange) {
  for (uint32_t job : {0u, 1u, 12345u, 0xfffffff0u, 0xffffffffu}) {
    for (uint32_t step : {0u, 1u, 28u, 29u, 1000u, kBatchStepId,
                          kInteractiveStepId, kExternStepId}) {
      uint16_t p = DerivePort(job, step, kMin, kMax);
      EXPECT_GE(p, kMin);
      EXPECT_LE(p, kMax);
      uint16_t q = DerivePort(job, step, 61000, 61063);
      EXPECT_GE(q, 61000);
      EXPECT_LE(q, 61063);
    }
  }
}

TEST(DerivePortTest, IsDeterministic) {
  EXPECT_EQ(DerivePort(4242, 3, kMin, kMax), DerivePort(4242, 3, kMin, kMax));
}

TEST(DerivePortTest, ConcurrentStepsOfOneJobDiffer) {
  std::set<uint16_t> ports;
  for (uint32_t step = 0; step < kSlotsPerJob - 3; ++step) {
    ports.insert(DerivePort(777, step, kMin, kMax));
  }
  ports.insert(DerivePort(777, kBatchStepId, kMin, kMax));
  ports.insert(DerivePort(777, kInteractiveStepId, kMin, kMax));
  ports.insert(DerivePort(777, kExternStepId, kMin, kMax));
  EXPECT_EQ(ports.size(), kSlotsPerJob);
}

TEST(DerivePortTest, NearbyJobsAndTheirStepsNeverShareAPort) {
  // Every (job, step) pair in a window of size/kSlotsPerJob consecutive job
  // ids (jobs that could share a node at the same time), starting anywhere,
  // including across the 32-bit wrap of the job-id product.
  const uint32_t window = (kMax - kMin + 1) / kSlotsPerJob;
  for (uint32_t first : {1u, 100000u, 0x7ffffff0u, 0xffffffffu - window}) {
    std::map<uint16_t, std::pair<uint32_t, uint32_t>> owner;
    for (uint32_t job = first; job < first + window; ++job) {
      for (uint32_t step :
           {0u, 1u, 2u, 27u, 28u, kBatchStepId, kInteractiveStepId}) {
        uint16_t p = DerivePort(job, step, kMin, kMax);
        auto [it, inserted] = owner.emplace(p, std::make_pair(job, step));
        EXPECT_TRUE(inserted)
            << "job " << job << " step " << step << " collides with job "
            << it->second.first << " step " << it->second.second;
      }
    }
  }
}

TEST(DerivePortTest, ArrayTasksWithConsecutiveIdsDiffer) {
  std::set<uint16_t> ports;
  for (uint32_t job = 5000; job < 5100; ++job) {
    ports.insert(DerivePort(job, 0, kMin, kMax));
  }
  EXPECT_EQ(ports.size(), 100u);
}

TEST(FirstReservedPortTest, TakesTheFirstPortOfAnyForm) {
  uint16_t p = 0;
  ASSERT_TRUE(FirstReservedPort("12000-12003", &p).ok());
  EXPECT_EQ(p, 12000);
  ASSERT_TRUE(FirstReservedPort("12005,12001", &p).ok());
  EXPECT_EQ(p, 12005);
  ASSERT_TRUE(FirstReservedPort("12010", &p).ok());
  EXPECT_EQ(p, 12010);
}

TEST(FirstReservedPortTest, RejectsGarbageNamingTheVariable) {
  uint16_t p = 9;
  for (const char* bad : {"", "abc", "-12000", "70000", "0", "12x-13"}) {
    Status s = FirstReservedPort(bad, &p);
    EXPECT_EQ(s.message(), std::string("SLURM_STEP_RESV_PORTS='") + bad +
                               "' does not start with a port number");
  }
  EXPECT_EQ(p, 9);
}

}  // namespace
}  // namespace dist_train
