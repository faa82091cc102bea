// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/star_agreement.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>
#include <thread>
#include <vector>

#include "base/coding.h"

namespace dist_train {
namespace {

Deadline Soon() { return DeadlineIn(5.0); }

// A star of `n` ranks over socket pairs: root[r] is rank 0's connection to
// rank r (root[0] unused), leaf[r] rank r's to rank 0.
struct Star {
  std::vector<Conn> root;
  std::vector<std::vector<Conn>> leaf;
  explicit Star(int n) : root(n), leaf(n) {
    for (int r = 1; r < n; ++r) {
      int fds[2];
      EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
      root[r] = Conn(fds[0], "rank " + std::to_string(r));
      leaf[r].emplace_back(fds[1], "rank 0");
    }
  }
};

TEST(StarAgreementTest, EveryRankGetsTheMinimum) {
  const int n = 5;
  const std::vector<int32_t> flags = {3, 7, -2, 9, 4};
  Star star(n);
  std::vector<int32_t> got(flags);
  std::vector<Status> status(n);
  std::vector<std::thread> ranks;
  for (int r = 1; r < n; ++r) {
    ranks.emplace_back(
        [&, r] { status[r] = StarAllMin(&star.leaf[r], r, &got[r], Soon()); });
  }
  status[0] = StarAllMin(&star.root, 0, &got[0], Soon());
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(status[r].ok()) << r << ": " << status[r].ToString();
    EXPECT_EQ(got[r], -2) << r;
  }
}

TEST(StarAgreementTest, EveryRankGetsRankZerosValue) {
  const int n = 4;
  Star star(n);
  std::vector<std::string> got = {"/dt-0123456789abcdef", "x", "", "y"};
  std::vector<Status> status(n);
  std::vector<std::thread> ranks;
  for (int r = 1; r < n; ++r) {
    ranks.emplace_back([&, r] {
      status[r] = StarBroadcast(&star.leaf[r], r, 64, &got[r], Soon());
    });
  }
  status[0] = StarBroadcast(&star.root, 0, 64, &got[0], Soon());
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(status[r].ok()) << r << ": " << status[r].ToString();
    EXPECT_EQ(got[r], "/dt-0123456789abcdef") << r;
  }
}

TEST(StarAgreementTest, AnEmptyValueArrivesEmpty) {
  Star star(2);
  std::string sent, got = "stale";
  ASSERT_TRUE(StarBroadcast(&star.root, 0, 64, &sent, Soon()).ok());
  ASSERT_TRUE(StarBroadcast(&star.leaf[1], 1, 64, &got, Soon()).ok());
  EXPECT_EQ(got, "");
}

TEST(StarAgreementTest, RankZeroRefusesAValueOverTheLimit) {
  Star star(2);
  std::string big(65, 'x');
  Status s = StarBroadcast(&star.root, 0, 64, &big, Soon());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "a set-up value of 65 bytes (limit 64)");
}

// What a rank makes of rank 0's answer, whatever rank 0 sent.
Status LeafReads(FrameType type, const std::string& payload, int32_t* flag) {
  Star star(2);
  EXPECT_TRUE(star.root[1].SendFrame(type, payload, Soon()).ok());
  return StarAllMin(&star.leaf[1], 1, flag, Soon());
}

TEST(StarAgreementTest, ARankTakesNoMalformedAnswer) {
  int32_t flag = 1;
  Status s = LeafReads(FrameType::kAgree, "abc", &flag);
  EXPECT_EQ(s.code(), Status::Code::kInternal);
  EXPECT_EQ(s.message(), "rank 0 sent 3 bytes where a 4-byte flag belongs");
  EXPECT_EQ(flag, 1);
  s = LeafReads(FrameType::kTable, std::string(4, '\0'), &flag);
  EXPECT_EQ(s.message(),
            "rank 0 sent 4 bytes of frame type 5 where a set-up agreement "
            "belongs");
  EXPECT_EQ(flag, 1);
}

TEST(StarAgreementTest, AnAbortNoticeIsTheError) {
  int32_t flag = 1;
  Status s =
      LeafReads(FrameType::kAbort, "rank 3 failed: out of memory", &flag);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.message(), "rank 3 failed: out of memory");
  EXPECT_EQ(flag, 1);
}

TEST(StarAgreementTest, AGoodbyeDuringSetUpIsAnError) {
  int32_t flag = 1;
  Status s = LeafReads(FrameType::kBye, "", &flag);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.message(), "rank 0 left during set-up");
}

TEST(StarAgreementTest, RankZeroNamesARankThatLeft) {
  Star star(3);
  std::string one;
  PutU32(&one, 1);
  ASSERT_TRUE(star.leaf[1][0].SendFrame(FrameType::kAgree, one, Soon()).ok());
  star.leaf[2][0].Close();
  int32_t flag = 1;
  Status s = StarAllMin(&star.root, 0, &flag, Soon());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank 2"), std::string::npos) << s.message();
}

TEST(StarAgreementTest, RankZeroTakesNoFlagOfTheWrongSize) {
  Star star(2);
  ASSERT_TRUE(
      star.leaf[1][0].SendFrame(FrameType::kAgree, "12345", Soon()).ok());
  int32_t flag = 1;
  Status s = StarAllMin(&star.root, 0, &flag, Soon());
  EXPECT_EQ(s.code(), Status::Code::kInternal);
  EXPECT_EQ(s.message(),
            "rank 1 sent 5 bytes of frame type 8 where a set-up agreement "
            "belongs");
}

}  // namespace
}  // namespace dist_train
