// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "dist_train/preemption.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "testing/testing_ranks.h"

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

TEST(PreemptionTest, SignalNamesWithOrWithoutSigAndNothingElse) {
  setenv("DT_PREEMPT_SIGNAL", "SIGURG", 1);
  EXPECT_TRUE(InstallStopHandler().ok());
  for (const char* bad : {"", "usr1", "SIG", "USR1 "}) {
    setenv("DT_PREEMPT_SIGNAL", bad, 1);
    EXPECT_EQ(InstallStopHandler().message(),
              std::string("DT_PREEMPT_SIGNAL='") + bad +
                  "' is not one of USR1, USR2, TERM, INT, HUP or URG");
  }
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

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A one-rank communicator for checkpoint calls in this process.
std::unique_ptr<Communicator> Alone() {
  std::unique_ptr<Communicator> c;
  Options o = Base(1, FreePort());
  o.rank = 0;
  Status s = Communicator::Create(o, &c);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

// Files an attacker wants overwritten: they must keep their bytes.
struct Victims {
  std::string dir = TempDir();
  std::string a = dir + "/a", b = dir + "/b";
  Victims() {
    std::ofstream(a) << "victim a\n";
    std::ofstream(b) << "victim b\n";
    chmod(a.c_str(), 0600);
    chmod(b.c_str(), 0600);
  }
  bool Untouched() const {
    return Slurp(a) == "victim a\n" && Slurp(b) == "victim b\n";
  }
  ~Victims() { EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0); }
};

TEST(PreemptionTest, SymlinksAtTheOldTempNamesAreNeverWrittenThrough) {
  // The temp names used to be ".NAME.tmp.<pid>": predictable.
  std::unique_ptr<Communicator> c = Alone();
  Victims v;
  std::string dir = TempDir(), pid = std::to_string(getpid());
  ASSERT_EQ(mkdir((dir + "/step-1").c_str(), 0700), 0);
  ASSERT_EQ(
      symlink(v.a.c_str(), (dir + "/step-1/.rank-0.ckpt.tmp." + pid).c_str()),
      0);
  ASSERT_EQ(symlink(v.b.c_str(), (dir + "/.LATEST.tmp." + pid).c_str()), 0);
  Status s = SaveCheckpoint(c.get(), dir, 1, "state");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(v.Untouched());
  uint64_t step = 0;
  std::string data;
  ASSERT_TRUE(LoadLatestCheckpoint(dir, 0, &step, &data).ok());
  EXPECT_EQ(data, "state");
  struct stat st {};
  ASSERT_EQ(stat((dir + "/step-1/rank-0.ckpt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(stat((dir + "/step-1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

TEST(PreemptionTest, ASymlinkedDirectoryIsRefusedByName) {
  std::unique_ptr<Communicator> c = Alone();
  Victims v;
  std::string dir = TempDir();
  ASSERT_EQ(symlink(v.dir.c_str(), (dir + "/step-1").c_str()), 0);
  ASSERT_EQ(symlink(v.dir.c_str(), (dir + "/link").c_str()), 0);
  EXPECT_EQ(SaveCheckpoint(c.get(), dir, 1, "state").message(),
            dir + "/step-1: is a symbolic link; not following it");
  EXPECT_EQ(SaveCheckpoint(c.get(), dir + "/link/", 2, "state").message(),
            dir + "/link: is a symbolic link; not following it");
  EXPECT_TRUE(v.Untouched());
  EXPECT_NE(access((v.dir + "/rank-0.ckpt").c_str(), F_OK), 0);
  EXPECT_NE(access((v.dir + "/step-2").c_str(), F_OK), 0);
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

TEST(PreemptionTest, ReadingNeverFollowsASymlinkOrOpensAFifo) {
  std::unique_ptr<Communicator> c = Alone();
  Victims v;
  std::string dir = TempDir();
  ASSERT_TRUE(SaveCheckpoint(c.get(), dir, 1, "state").ok());
  uint64_t step = 0;
  std::string data;
  struct Case {
    std::string file;  // replaced by `kind`
    char kind;         // 'l': a symlink to a victim, 'p': a FIFO
    std::string error;
  };
  for (const Case& k : std::vector<Case>{
           {"/LATEST", 'l', "/LATEST: is a symbolic link; not following it"},
           {"/LATEST", 'p', "/LATEST: not a regular file"},
           {"/step-1/rank-0.ckpt", 'l',
            "/step-1/rank-0.ckpt: is a symbolic link; not following it"},
           {"/step-1/rank-0.ckpt", 'p',
            "/step-1/rank-0.ckpt: not a regular file"}}) {
    std::string path = dir + k.file, keep = path + ".keep";
    ASSERT_EQ(rename(path.c_str(), keep.c_str()), 0);
    std::ofstream(v.a) << "1\n";
    ASSERT_EQ(k.kind == 'l' ? symlink(v.a.c_str(), path.c_str())
                            : mkfifo(path.c_str(), 0600),
              0);
    EXPECT_EQ(LoadLatestCheckpoint(dir, 0, &step, &data).message(),
              dir + k.error);
    ASSERT_EQ(rename(keep.c_str(), path.c_str()), 0);
  }
  EXPECT_TRUE(LoadLatestCheckpoint(dir, 0, &step, &data).ok());
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

TEST(PreemptionTest, SizeBombsAreRefusedBeforeTheyAreRead) {
  std::unique_ptr<Communicator> c = Alone();
  std::string dir = TempDir();
  ASSERT_TRUE(SaveCheckpoint(c.get(), dir, 1, "state").ok());
  uint64_t step = 0;
  std::string data;
  // A sparse LATEST of 64 MiB (the old code read it whole: at 64 GiB it
  // exhausted memory); refused from its size alone.
  ASSERT_EQ(truncate((dir + "/LATEST").c_str(), off_t{64} << 20), 0);
  EXPECT_EQ(LoadLatestCheckpoint(dir, 0, &step, &data).message(),
            dir + "/LATEST is damaged (over 32 bytes)");
  std::ofstream(dir + "/LATEST", std::ios::trunc) << "1\n";
  // A header that claims more than the file holds, and a sparse file
  // larger than its header says.
  std::string rank = dir + "/step-1/rank-0.ckpt";
  std::ofstream(rank, std::ios::trunc)
      << std::string("DTCK\x00\x00\x01\x00\0\0\0\0", 12);
  EXPECT_EQ(LoadLatestCheckpoint(dir, 0, &step, &data).message(),
            rank + " is damaged (bad header or length)");
  ASSERT_EQ(truncate(rank.c_str(), off_t{64} << 20), 0);
  EXPECT_EQ(LoadLatestCheckpoint(dir, 0, &step, &data).message(),
            rank + " is damaged (bad header or length)");
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

TEST(PreemptionTest, DirectoriesOthersCanWriteOrOwnAreRefusedByName) {
  std::unique_ptr<Communicator> c = Alone();
  std::string dir = TempDir();
  uint64_t step = 0;
  std::string data;
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  EXPECT_EQ(SaveCheckpoint(c.get(), dir, 1, "state").message(),
            dir +
                ": writable by other users (mode 0777, no sticky bit); "
                "refusing it for checkpoints");
  ASSERT_EQ(chmod(dir.c_str(), 0703), 0);
  EXPECT_EQ(LoadLatestCheckpoint(dir, 0, &step, &data).message(),
            dir +
                ": writable by other users (mode 0703, no sticky bit); "
                "refusing it for checkpoints");
  ASSERT_EQ(chmod(dir.c_str(), 01777), 0);  // like /tmp: allowed
  ASSERT_TRUE(SaveCheckpoint(c.get(), dir, 1, "state").ok());
  ASSERT_EQ(chmod(dir.c_str(), 0770), 0);  // mkdir -p under umask 002
  ASSERT_TRUE(SaveCheckpoint(c.get(), dir, 2, "state").ok());
  ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
  if (geteuid() == 0) {
    ASSERT_EQ(chown((dir + "/step-2").c_str(), 65534, 65534), 0);
    EXPECT_EQ(LoadLatestCheckpoint(dir, 0, &step, &data).message(),
              dir +
                  "/step-2: owned by uid 65534, not by this user (uid 0); "
                  "refusing it for checkpoints");
    ASSERT_EQ(chown((dir + "/LATEST").c_str(), 65534, 65534), 0);
    EXPECT_EQ(LoadLatestCheckpoint(dir, 0, &step, &data).message(),
              dir +
                  "/LATEST: owned by uid 65534, not by this user (uid 0); "
                  "not reading it");
  }
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

TEST(PreemptionTest, AGarbageDeadlineOrJobIdIsAnErrorNotUnknown) {
  unsetenv("SLURM_JOB_ID");
  int64_t left = 0;
  setenv("DT_JOB_DEADLINE", "12x", 1);
  Status s = JobSecondsLeft(&left);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "DT_JOB_DEADLINE='12x' is not seconds since the epoch");
  setenv("DT_JOB_DEADLINE", "0", 1);
  EXPECT_EQ(JobSecondsLeft(&left).message(),
            "DT_JOB_DEADLINE='0' is not seconds since the epoch");
  unsetenv("DT_JOB_DEADLINE");
  setenv("SLURM_JOB_ID", "job7", 1);
  EXPECT_EQ(JobSecondsLeft(&left).message(),
            "SLURM_JOB_ID='job7' is not an integer from 1 to 4294967295");
  unsetenv("SLURM_JOB_ID");
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

TEST(PreemptionTest, RequeueRefusesGarbageCounts) {
  setenv("SLURM_JOB_ID", "0", 1);
  Status s = RequeueJob(3);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "SLURM_JOB_ID='0' is not an integer from 1 to 4294967295");
  setenv("SLURM_JOB_ID", "4242", 1);
  setenv("SLURM_RESTART_COUNT", "-1", 1);
  EXPECT_EQ(RequeueJob(3).message(), "SLURM_RESTART_COUNT='-1' is not a count");
  setenv("SLURM_RESTART_COUNT", "1", 1);
  setenv("DT_MAX_REQUEUES", "", 1);
  EXPECT_EQ(RequeueJob().message(), "DT_MAX_REQUEUES='' is not a count");
  setenv("DT_MAX_REQUEUES", "1", 1);
  EXPECT_EQ(RequeueJob().message(),
            "job 4242 was already requeued 1 times (limit 1)");
  unsetenv("DT_MAX_REQUEUES");
  unsetenv("SLURM_RESTART_COUNT");
  unsetenv("SLURM_JOB_ID");
}

}  // namespace
}  // namespace dist_train
