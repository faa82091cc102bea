// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/step_status.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

namespace dist_train {
namespace {

class StepStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dt-step-status-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
  }
  void TearDown() override {
    ASSERT_EQ(system(("rm -rf " + base_).c_str()), 0);
  }
  std::string MakeStep(const std::string& name) {
    std::string dir = base_ + "/" + name;
    EXPECT_EQ(mkdir(dir.c_str(), 0700), 0);
    return dir;
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  static LiveRecord Live(int rank, double compute_ms) {
    LiveRecord r;
    r.rank = rank;
    r.host = "node" + std::to_string(rank + 1);
    r.pid = 800 + rank;
    r.steps = 120;
    r.collectives = 120;
    r.windows = 9;
    r.compute_ms = compute_ms;
    r.step_ms = 24;
    r.idle_seconds = 0.1;
    r.watchdog_seconds = 60;
    r.updated = 1000;
    return r;
  }
  std::string base_;
};

TEST_F(StepStatusTest, FindsTheJobsStepsInOrder) {
  for (const char* s : {"10", "0.r10", "2", "batch", "0.r9", "1.r9"})
    MakeStep("dist-train-watchdog-42." + std::string(s));
  MakeStep("dist-train-watchdog-420.0");
  std::vector<std::string> names;
  ASSERT_TRUE(FindStepDirs(base_, "42", &names).ok());
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "dist-train-watchdog-42.2", "dist-train-watchdog-42.10",
                "dist-train-watchdog-42.batch", "dist-train-watchdog-42.0.r9",
                "dist-train-watchdog-42.1.r9", "dist-train-watchdog-42.0.r10"}))
      << "runs in order, the last run's last step last";
  Status s = FindStepDirs(base_, "7", &names);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("--dist-train=watchdog=SECONDS"),
            std::string::npos);
}

TEST_F(StepStatusTest, ShowsEveryRankWithItsFlags) {
  std::string dir = MakeStep("dist-train-watchdog-42.0");
  LiveRecord ended = Live(3, 20);
  ended.ended = true;
  LiveRecord stale = Live(1, 20.1);
  stale.updated = 980;
  Write(dir + "/rank-0.live", EncodeLiveRecord(Live(0, 20)));
  Write(dir + "/rank-1.live", EncodeLiveRecord(stale));
  Write(dir + "/rank-2.live", EncodeLiveRecord(Live(2, 24.1)));
  Write(dir + "/rank-3.live", EncodeLiveRecord(ended));
  Write(dir + "/stragglers.txt",
        "dist-train: straggler: rank 2 on node3 (pid 802): 24.1 ms ...\n");
  StepStatus st;
  ASSERT_TRUE(ReadStepStatus(base_, "dist-train-watchdog-42.0", &st).ok());
  EXPECT_EQ(st.job, "42");
  EXPECT_EQ(st.step, "0");
  ASSERT_EQ(st.ranks.size(), 4u);
  std::string table = FormatStatusTable(st, 1002);
  EXPECT_NE(table.find("job 42, step 0: 4 ranks, watchdog 60 s (" + dir +
                       ")\n"
                       "RANK  HOST   PID  STEPS  LAST PROGRESS  STEP ms  "
                       "COMPUTE ms  FLAGS\n"
                       "   0  node1  800    120  2.1 s ago         24.0        "
                       "20.0\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("20.1  stale (no record for 22 s)\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("24.1  straggler\n"), std::string::npos) << table;
  EXPECT_NE(table.find("20.0  ended\n"), std::string::npos) << table;

  nlohmann::json j = nlohmann::json::parse(FormatStatusJson(st, 1002));
  EXPECT_EQ(j["job"], "42");
  ASSERT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["ranks"][2]["straggler"], true);
  EXPECT_EQ(j["ranks"][0]["straggler"], false);
  EXPECT_EQ(j["ranks"][1]["stale"], true);
  EXPECT_EQ(j["ranks"][3]["ended"], true);
  EXPECT_DOUBLE_EQ(j["ranks"][2]["compute_ms"].get<double>(), 24.1);
}

// Step 1 of the job's second requeued run (SLURM_RESTART_COUNT=2).
TEST_F(StepStatusTest, AHangSummaryFlagsTheRanksItNames) {
  std::string dir = MakeStep("dist-train-watchdog-5.1.r2");
  Write(dir + "/rank-0.live", EncodeLiveRecord(Live(0, -1)));
  Write(dir + "/rank-1.live", EncodeLiveRecord(Live(1, -1)));
  Write(dir + "/summary.txt",
        "dist-train: watchdog: no rank progressed for 60 s; ...\n"
        "dist-train: watchdog: rank 1 on node2 (pid 801) did not progress: "
        "stopped\n");
  StepStatus st;
  ASSERT_TRUE(ReadStepStatus(base_, "dist-train-watchdog-5.1.r2", &st).ok());
  nlohmann::json j = nlohmann::json::parse(FormatStatusJson(st, 1000));
  EXPECT_EQ(j["job"], "5");
  EXPECT_EQ(j["step"], "1.r2");
  EXPECT_EQ(j["ranks"][0]["hung"], false);
  EXPECT_EQ(j["ranks"][1]["hung"], true);
  EXPECT_TRUE(j["ranks"][1]["compute_ms"].is_null());
  EXPECT_NE(FormatStatusTable(st, 1000).find("-  hung\n"), std::string::npos);
}

TEST_F(StepStatusTest, ThePreflightReportFollowsTheTable) {
  std::string dir = MakeStep("dist-train-watchdog-8.0");
  Write(dir + "/rank-0.live", EncodeLiveRecord(Live(0, 20)));
  Write(dir + "/preflight.txt",
        "dist-train: preflight: passed: 2 nodes, ...\n");
  StepStatus st;
  ASSERT_TRUE(ReadStepStatus(base_, "dist-train-watchdog-8.0", &st).ok());
  std::string table = FormatStatusTable(st, 1000);
  EXPECT_NE(table.find("20.0\ndist-train: preflight: passed: 2 nodes, ...\n"),
            std::string::npos)
      << table;
  nlohmann::json j = nlohmann::json::parse(FormatStatusJson(st, 1000));
  EXPECT_EQ(j["preflight_report"],
            "dist-train: preflight: passed: 2 nodes, ...\n");
}

TEST_F(StepStatusTest, AnEndedJobsRanksAreEndedNotStale) {
  std::string dir = MakeStep("dist-train-watchdog-6.0");
  Write(dir + "/rank-0.live", EncodeLiveRecord(Live(0, 20)));
  StepStatus st;
  ASSERT_TRUE(ReadStepStatus(base_, "dist-train-watchdog-6.0", &st).ok());
  EXPECT_NE(
      FormatStatusTable(st, 5000).find("  stale (no record for 4000 s)\n"),
      std::string::npos);
  st.job_ended = true;
  std::string table = FormatStatusTable(st, 5000);
  EXPECT_NE(table.find("20.0  ended\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("stale"), std::string::npos) << table;
}

TEST_F(StepStatusTest, DamagedRecordsAreNamedNotShown) {
  std::string dir = MakeStep("dist-train-watchdog-5.0");
  Write(dir + "/rank-0.live", EncodeLiveRecord(Live(0, 20)));
  Write(dir + "/rank-1.live", "rank=1\ngarbage\n");
  Write(dir + "/rank-2.live", EncodeLiveRecord(Live(3, 20)));  // wrong name
  ASSERT_EQ(symlink("/etc/passwd", (dir + "/rank-4.live").c_str()), 0);
  StepStatus st;
  ASSERT_TRUE(ReadStepStatus(base_, "dist-train-watchdog-5.0", &st).ok());
  ASSERT_EQ(st.ranks.size(), 1u);
  EXPECT_EQ(st.unreadable.size(), 3u);
  std::string table = FormatStatusTable(st, 1000);
  EXPECT_NE(
      table.find("dt-status: " + dir + "/rank-1.live is not a live record"),
      std::string::npos)
      << table;
}

TEST_F(StepStatusTest, RefusesADirectoryThatIsALink) {
  MakeStep("real");
  ASSERT_EQ(symlink((base_ + "/real").c_str(),
                    (base_ + "/dist-train-watchdog-9.0").c_str()),
            0);
  StepStatus st;
  EXPECT_FALSE(ReadStepStatus(base_, "dist-train-watchdog-9.0", &st).ok());
}

TEST(NamedRanksTest, ReadsTheRankOfEachNamingLine) {
  EXPECT_EQ(NamedRanks("dist-train: straggler: rank 2 on a\n"
                       "dist-train: straggler: rank 17 on b\nnoise rank 3\n",
                       "dist-train: straggler: rank "),
            (std::set<int>{2, 17}));
  EXPECT_TRUE(NamedRanks("", "x").empty());
}

}  // namespace
}  // namespace dist_train
