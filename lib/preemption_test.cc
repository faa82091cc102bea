// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "dist_train/preemption.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <fstream>

#include "testing_ranks.h"

namespace dist_train {
namespace {

using namespace testing_ranks;  // NOLINT: test helpers

std::string TempDir() {
  char tmpl[] = "/tmp/dt-ckpt.XXXXXX";
  return mkdtemp(tmpl);
}

TEST(PreemptionTest, TheSignalOnlyRecordsAndEveryRankAgreesToStop) {
  auto fn = [](const Options& o) {
    CHILD_CHECK(InstallStopHandler(SIGUSR2).ok(), "install");
    std::unique_ptr<Communicator> c;
    CHILD_CHECK(Communicator::Create(o, &c).ok(), "create");
    bool stop = true;
    CHILD_CHECK(AgreeToStop(c.get(), &stop).ok() && !stop,
                "no request: no stop");
    if (c->rank() == 1) raise(SIGUSR2);  // only rank 1 is warned; it survives
    CHILD_CHECK(AgreeToStop(c.get(), &stop).ok() && stop,
                "rank %d did not stop with the others", c->rank());
    return 0;
  };
  EXPECT_EQ(RunRanks(3, Base(3, FreePort()), fn), std::vector<int>(3, 0));
}

TEST(PreemptionTest, BadSignalNameIsNamed) {
  setenv("DT_PREEMPT_SIGNAL", "KILL", 1);
  EXPECT_EQ(InstallStopHandler().message(),
            "DT_PREEMPT_SIGNAL='KILL' is not one of USR1, USR2, TERM, INT, HUP "
            "or URG");
  unsetenv("DT_PREEMPT_SIGNAL");
}

TEST(PreemptionTest, CheckpointsAreAtomicAndOnlyCompleteOnesLoad) {
  std::string dir = TempDir();
  auto save = [dir](const Options& o) {
    std::unique_ptr<Communicator> c;
    CHILD_CHECK(Communicator::Create(o, &c).ok(), "create");
    for (uint64_t step : {5, 6}) {
      Status s = SaveCheckpoint(c.get(), dir, step,
                                "rank " + std::to_string(c->rank()) + " step " +
                                    std::to_string(step));
      CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    }
    // Step 7: rank 2 dies before writing; the others must not mark it.
    if (c->rank() == 2) raise(SIGKILL);
    Status s = SaveCheckpoint(c.get(), dir, 7, "torn");
    CHILD_CHECK(!s.ok(), "step 7 must fail without rank 2");
    return 0;
  };
  std::vector<int> codes = RunRanks(3, Base(3, FreePort()), save);
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 128 + SIGKILL}));
  for (int r = 0; r < 3; ++r) {
    uint64_t step = 0;
    std::string data;
    Status s = LoadLatestCheckpoint(dir, r, &step, &data);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(step, 6u) << "the torn step 7 is never the latest";
    EXPECT_EQ(data, "rank " + std::to_string(r) + " step 6");
  }
  // A damaged file is an error, never data.
  std::ofstream(dir + "/step-6/rank-1.ckpt", std::ios::trunc) << "DTCK\0\0";
  uint64_t step = 0;
  std::string data;
  EXPECT_EQ(LoadLatestCheckpoint(dir, 1, &step, &data).message(),
            dir + "/step-6/rank-1.ckpt is damaged (bad header or length)");
  EXPECT_EQ(LoadLatestCheckpoint(dir + "/none", 0, &step, &data).code(),
            Status::Code::kNotFound);
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

TEST(PreemptionTest, SecondsLeftFromTheDeadlineOutsideSlurm) {
  unsetenv("SLURM_JOB_ID");
  int64_t left = 0;
  unsetenv("DT_JOB_DEADLINE");
  EXPECT_EQ(JobSecondsLeft(&left).code(), Status::Code::kNotFound);
  setenv("DT_JOB_DEADLINE", std::to_string(time(nullptr) + 600).c_str(), 1);
  ASSERT_TRUE(JobSecondsLeft(&left).ok());
  EXPECT_GE(left, 598);
  EXPECT_LE(left, 600);
  unsetenv("DT_JOB_DEADLINE");
}

TEST(PreemptionTest, RequeueRefusesPastTheMaximumAndOutsideSlurm) {
  unsetenv("SLURM_JOB_ID");
  EXPECT_EQ(RequeueJob(3).message(),
            "SLURM_JOB_ID is not set: not inside a Slurm job");
  setenv("SLURM_JOB_ID", "4242", 1);
  setenv("SLURM_RESTART_COUNT", "3", 1);
  EXPECT_EQ(RequeueJob(3).message(),
            "job 4242 was already requeued 3 times (limit 3)");
  setenv("DT_MAX_REQUEUES", "2", 1);
  EXPECT_EQ(RequeueJob().message(),
            "job 4242 was already requeued 3 times (limit 2)");
  setenv("DT_MAX_REQUEUES", "lots", 1);
  EXPECT_EQ(RequeueJob().message(), "DT_MAX_REQUEUES='lots' is not a count");
  unsetenv("DT_MAX_REQUEUES");
  unsetenv("SLURM_RESTART_COUNT");
  unsetenv("SLURM_JOB_ID");
}

}  // namespace
}  // namespace dist_train
