// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/hang_report.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

HangRecord Rank(int rank, const char* host, char state, uint64_t collectives,
                bool inside) {
  HangRecord r;
  r.rank = rank;
  r.host = host;
  r.pid = 100 + rank;
  r.state = state;
  r.progress.collectives = collectives;
  r.progress.inside = inside;
  r.progress.call = CallKind::kAllReduce;
  r.idle_seconds = 31;
  return r;
}

TEST(HangReportTest, RecordRoundTrips) {
  HangRecord r = Rank(3, "node4", 'T', 120, false);
  r.progress.heartbeats = 7;
  HangRecord back;
  ASSERT_TRUE(DecodeHangRecord(EncodeHangRecord(r), &back));
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.host, "node4");
  EXPECT_EQ(back.pid, 103);
  EXPECT_EQ(back.state, 'T');
  EXPECT_EQ(back.progress, r.progress);
  EXPECT_EQ(back.idle_seconds, 31);
}

TEST(HangReportTest, DecodeRefusesWhatEncodeNeverWrites) {
  std::string good = EncodeHangRecord(Rank(1, "n", 'S', 1, true));
  HangRecord r;
  for (const std::string& bad :
       {std::string(""), good + "rank=2\n", good.substr(0, good.size() / 2),
        "x" + good,
        std::string("rank=-1\n") + good.substr(good.find('\n') + 1)}) {
    EXPECT_FALSE(DecodeHangRecord(bad, &r)) << bad;
  }
  std::string call = good;
  call.replace(call.find("call=1"), 6, "call=9");
  EXPECT_FALSE(DecodeHangRecord(call, &r));
}

TEST(HangReportTest, NamesTheStoppedRankBehindTheOthers) {
  std::vector<HangRecord> rs = {
      Rank(0, "node1", 'S', 121, true), Rank(3, "node4", 'T', 120, false),
      Rank(1, "node2", 'S', 121, true), Rank(2, "node3", 'S', 121, true)};
  EXPECT_EQ(HangSummary(rs, 4, 30, "/home/u/dist-train-watchdog-42.0"),
            "dist-train: watchdog: no rank progressed for 30 s; 4 of 4 ranks "
            "reported, stacks in /home/u/dist-train-watchdog-42.0\n"
            "dist-train: watchdog: rank 3 on node4 (pid 103) did not "
            "progress: stopped (SIGSTOP or a debugger), after all_reduce "
            "#120; the others are inside all_reduce #121\n");
}

TEST(HangReportTest, AllStuckInOneCallAreAllNamed) {
  std::vector<HangRecord> rs = {Rank(0, "a", 'S', 5, true),
                                Rank(1, "b", 'R', 5, true)};
  std::string s = HangSummary(rs, 2, 10, "d");
  EXPECT_NE(s.find("rank 0 on a (pid 100) did not progress: waiting, inside "
                   "all_reduce #5\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("rank 1 on b (pid 101) did not progress: running, inside "
                   "all_reduce #5\n"),
            std::string::npos)
      << s;
}

TEST(HangReportTest, HungHostsAreTheNamedRanksHostsEachOnce) {
  std::vector<HangRecord> rs = {
      Rank(0, "node1", 'S', 121, true), Rank(3, "node4", 'T', 120, false),
      Rank(1, "node2", 'S', 121, true), Rank(2, "node4", 'S', 119, false)};
  EXPECT_EQ(HungHosts(rs), std::vector<std::string>{"node4"});
}

TEST(HangReportTest, NoHostIsBlamedWhenAllAreStuckInOneCall) {
  EXPECT_TRUE(
      HungHosts({Rank(0, "a", 'S', 5, true), Rank(1, "b", 'R', 5, true)})
          .empty());
}

TEST(HangReportTest, NamesRanksWithoutARecord) {
  std::vector<HangRecord> rs = {Rank(0, "a", 'S', 0, false)};
  std::string s = HangSummary(rs, 3, 10, "d");
  EXPECT_NE(s.find("1 of 3 ranks reported"), std::string::npos) << s;
  EXPECT_NE(s.find("did not progress: waiting, after no collective yet\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("dist-train: watchdog: no record from ranks 1, 2 (its "
                   "node did not answer in time)\n"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace dist_train
