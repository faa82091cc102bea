// Copyright dist-train authors. SPDX-License-Identifier: MIT

#include "testing/memory_ring.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace dist_train {
namespace {

TEST(MemoryRingTest, BytesGoToTheNextRankInOrderInPieces) {
  MemoryRingOptions opt;
  opt.piece = 3;
  MemoryRing ring(2, opt);
  std::string got0(10, '?'), got1(10, '?');
  std::vector<size_t> seen;
  std::thread t([&] {
    ASSERT_TRUE(ring.link(1)
                    ->Exchange("0123456789", 10, got1.data(), 10,
                               [&](size_t n) { seen.push_back(n); })
                    .ok());
  });
  ASSERT_TRUE(ring.link(0)->Exchange("abcdefghij", 10, got0.data(), 10).ok());
  t.join();
  EXPECT_EQ(got1, "abcdefghij");  // rank 0's bytes reach rank 1
  EXPECT_EQ(got0, "0123456789");  // and rank 1's rank 0: a ring of two
  EXPECT_EQ(seen, (std::vector<size_t>{3, 6, 9, 10}));
}

TEST(MemoryRingTest, AWaitWithoutBytesEndsAtTheDeadlineNamingThePeer) {
  MemoryRingOptions opt;
  opt.timeout_seconds = 0.1;
  MemoryRing ring(3, opt);
  char c;
  Status s = ring.link(1)->Exchange(nullptr, 0, &c, 1);
  EXPECT_EQ(s.code(), Status::Code::kTimeout) << s.ToString();
  EXPECT_NE(s.message().find("rank 0"), std::string::npos) << s.ToString();
}

TEST(MemoryRingTest, ABrokenRankWakesItsWaitingNextRank) {
  MemoryRing ring(2);
  char c;
  Status s;
  std::thread t([&] { s = ring.link(1)->Exchange(nullptr, 0, &c, 1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ring.Break(0);
  t.join();
  EXPECT_EQ(
      s.ToString().find("rank 0 closed the connection") != std::string::npos,
      true)
      << s.ToString();
}

}  // namespace
}  // namespace dist_train
