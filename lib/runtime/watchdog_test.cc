// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/watchdog.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "base/clock.h"
#include "runtime/progress.h"
#include "testing/testing_env.h"
#include "testing/testing_files.h"
#include "testing/testing_requeue.h"

namespace dist_train {
namespace {

using testing_requeue::RecordingOps;

std::string Text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

WatchdogOptions Quick(const std::string& dir) {
  WatchdogOptions o;
  o.seconds = 1;
  o.dir = dir;
  o.host = "hostA";
  o.poll_seconds = 0.1;
  o.dump_seconds = 0.3;
  o.gather_seconds = 2;
  return o;
}

// A worker that starts its watchdog, makes `steps` heartbeats, then hangs;
// returns its pid (the caller reaps it).
pid_t HangingWorker(const WatchdogOptions& o, int steps) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!StartWatchdog(o).ok()) _exit(2);
    for (int i = 0; i < steps; ++i) {
      NoteHeartbeat();
      usleep(100 * 1000);
    }
    for (;;) pause();
  }
  return pid;
}

// How the worker ended, within `seconds` (-1: it did not).
int EndSignal(pid_t pid, double seconds) {
  double deadline = MonotonicSeconds() + seconds;
  int status = 0;
  while (MonotonicSeconds() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFSIGNALED(status) ? WTERMSIG(status) : -2;
    usleep(20 * 1000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

TEST(WatchdogTest, AHungWorkerIsDumpedSummarizedAndKilled) {
  testing_files::TempDir dir;
  pid_t pid = HangingWorker(Quick(dir.path()), 5);
  double start = MonotonicSeconds();
  EXPECT_EQ(EndSignal(pid, 10), SIGKILL);
  EXPECT_GE(MonotonicSeconds() - start, 1.5);  // 0.5 s of steps, then 1 s
  std::string step =
      dir.path() + "/dist-train-watchdog-pid" + std::to_string(pid) + ".0";
  std::string summary = Text(step + "/summary.txt");
  EXPECT_NE(summary.find("dist-train: watchdog: no rank progressed for 1 s; "
                         "1 of 1 ranks reported, stacks in " +
                         step + "\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("rank 0 on hostA (pid " + std::to_string(pid) +
                         ") did not progress: waiting, after no collective "
                         "yet\n"),
            std::string::npos)
      << summary;
  std::string stacks = Text(step + "/rank-0.stacks");
  EXPECT_NE(stacks.find("native backtrace of the signalled thread:"),
            std::string::npos)
      << stacks;
  std::string record = Text(step + "/rank-0.record");
  EXPECT_NE(record.find("heartbeats=5\n"), std::string::npos) << record;
}

TEST(WatchdogTest, AStoppedWorkerIsNamedAsStopped) {
  testing_files::TempDir dir;
  pid_t pid = HangingWorker(Quick(dir.path()), 1000);
  usleep(300 * 1000);
  kill(pid, SIGSTOP);
  EXPECT_EQ(EndSignal(pid, 10), SIGKILL);
  std::string step =
      dir.path() + "/dist-train-watchdog-pid" + std::to_string(pid) + ".0";
  EXPECT_NE(Text(step + "/summary.txt")
                .find("did not progress: stopped (SIGSTOP or a debugger)"),
            std::string::npos);
  EXPECT_NE(Text(step + "/rank-0.stacks")
                .find("stopped: its dump handler cannot run"),
            std::string::npos);
}

TEST(WatchdogTest, TheWatchdogHoldsNoneOfTheWorkersDescriptors) {
  testing_files::TempDir dir;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);  // the worker keeps the write end, like a socket
    WatchdogOptions o = Quick(dir.path());
    o.poll_seconds = 3;  // a watchdog holding the pipe would keep it 3 s
    if (!StartWatchdog(o).ok()) _exit(2);
    for (int i = 0; i < 5; ++i) {
      NoteHeartbeat();
      usleep(100 * 1000);
    }
    _exit(0);
  }
  close(fds[1]);
  char c;
  double start = MonotonicSeconds();
  // EOF once the worker exits: its watchdog did not keep the pipe open.
  EXPECT_EQ(read(fds[0], &c, 1), 0);
  EXPECT_LT(MonotonicSeconds() - start, 1.5);  // the worker's own 0.5 s
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A heartbeat every 100 ms for 3.5 s against a 2 s threshold: a watchdog
// that ignored progress would fire; this one must not, even when the
// machine is busy enough to hold a process off its CPU for a second (a
// 1 s threshold failed so once, beside a busy loop on this 2-CPU VM).
TEST(WatchdogTest, AProgressingWorkerIsLeftAlone) {
  testing_files::TempDir dir;
  pid_t pid = fork();
  if (pid == 0) {
    WatchdogOptions o = Quick(dir.path());
    o.seconds = 2;
    if (!StartWatchdog(o).ok()) _exit(2);
    for (int i = 0; i < 35; ++i) {
      NoteHeartbeat();
      usleep(100 * 1000);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(WatchdogTest, OptionsFromTheEnvironmentNameTheBadVariable) {
  WatchdogOptions o;
  // Unset: off, and nothing else is read (a bad RANK is Create's to name).
  ASSERT_TRUE(ReadWatchdogOptions({{"RANK", "x"}}, -1, -1, &o).ok());
  EXPECT_EQ(o.seconds, 0);
  ASSERT_TRUE(ReadWatchdogOptions({{"DT_WATCHDOG", "5"}}, -1, -1, &o).ok());
  EXPECT_EQ(o.dir, ".");
  EXPECT_EQ(o.rank, 0);
  EXPECT_EQ(o.world_size, 1);
  ASSERT_TRUE(ReadWatchdogOptions({{"DT_WATCHDOG", "30"},
                                   {"SLURM_PROCID", "3"},
                                   {"SLURM_NTASKS", "8"},
                                   {"SLURM_SUBMIT_DIR", "/home/u"},
                                   {"SLURMD_NODENAME", "node2"}},
                                  -1, -1, &o)
                  .ok());
  EXPECT_EQ(o.seconds, 30);
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.world_size, 8);
  EXPECT_EQ(o.dir, "/home/u");
  EXPECT_EQ(o.host, "node2");
  EXPECT_EQ(ReadWatchdogOptions({{"DT_WATCHDOG", "2"}}, -1, -1, &o).message(),
            "DT_WATCHDOG='2' is not an integer from 5 to 86400");
  EXPECT_EQ(ReadWatchdogOptions(
                {{"DT_WATCHDOG", "10"}, {"RANK", "4"}, {"WORLD_SIZE", "4"}}, -1,
                -1, &o)
                .message(),
            "watchdog: rank 4 is not below 4 ranks");
  // What Create resolved wins over the environment.
  ASSERT_TRUE(
      ReadWatchdogOptions({{"DT_WATCHDOG", "10"}, {"RANK", "x"}}, 1, 2, &o)
          .ok());
  EXPECT_EQ(o.rank, 1);
  EXPECT_EQ(o.world_size, 2);
}

TEST(WatchdogTest, ThePolicyIsFailOrRequeue) {
  WatchdogOptions o;
  ASSERT_TRUE(ReadWatchdogOptions({{"DT_WATCHDOG", "30"}}, 0, 1, &o).ok());
  EXPECT_FALSE(o.requeue);
  ASSERT_TRUE(
      ReadWatchdogOptions(
          {{"DT_WATCHDOG", "30"}, {"DT_WATCHDOG_POLICY", "requeue"}}, 0, 1, &o)
          .ok());
  EXPECT_TRUE(o.requeue);
  EXPECT_EQ(
      ReadWatchdogOptions(
          {{"DT_WATCHDOG", "30"}, {"DT_WATCHDOG_POLICY", "Requeue"}}, 0, 1, &o)
          .message(),
      "DT_WATCHDOG_POLICY='Requeue' is not fail or requeue");
}

TEST(WatchdogTest, PolicyRequeueRequeuesTheJobBeforeTheWorkerIsKilled) {
  testing_files::TempDir dir;
  testing_env::ScopedEnv env;  // the watchdog reads the process's
  env.Set("SLURM_JOB_ID", "77");
  env.Set("DT_MAX_REQUEUES", "2");
  env.Unset("SLURM_RESTART_COUNT");
  WatchdogOptions o = Quick(dir.path());
  o.requeue = true;
  o.requeue_ops = RecordingOps(dir.path() + "/calls");
  pid_t pid = HangingWorker(o, 2);
  EXPECT_EQ(EndSignal(pid, 10), SIGKILL);
  // One rank of one: every rank is named, so no host is blamed.
  EXPECT_EQ(Text(dir.path() + "/calls"), "load 77\nrequeue 77\nset 77 nodeZ\n");
  std::string summary =
      Text(dir.path() + "/dist-train-watchdog-77.0/summary.txt");
  EXPECT_NE(summary.find("dist-train: watchdog: requeueing job 77 (requeue 1 "
                         "of 2) excluding no node\n"),
            std::string::npos)
      << summary;
}

TEST(WatchdogTest, SaveInWatchdogDirWritesOnlyWhenAWatchdogIsAsked) {
  testing_files::TempDir dir;
  EnvMap env = {{"DT_WATCHDOG_DIR", dir.path()},
                {"SLURM_JOB_ID", "5"},
                {"SLURM_STEP_ID", "1"}};
  ASSERT_TRUE(SaveInWatchdogDir(env, "preflight.txt", "report\n").ok());
  struct stat st {};
  EXPECT_NE(stat((dir.path() + "/dist-train-watchdog-5.1").c_str(), &st), 0);
  env["DT_WATCHDOG"] = "30";
  ASSERT_TRUE(SaveInWatchdogDir(env, "preflight.txt", "report\n").ok());
  EXPECT_EQ(Text(dir.path() + "/dist-train-watchdog-5.1/preflight.txt"),
            "report\n");
  env["DT_WATCHDOG"] = "1";
  EXPECT_FALSE(SaveInWatchdogDir(env, "preflight.txt", "x").ok());
}

// A requeued job numbers its steps from 0 again: its second run's step 1
// has a directory of its own, and the first run's stays as it was.
TEST(WatchdogTest, ARequeuedRunHasItsOwnStepDirectory) {
  testing_files::TempDir dir;
  EnvMap env = {{"DT_WATCHDOG_DIR", dir.path()},
                {"DT_WATCHDOG", "30"},
                {"SLURM_JOB_ID", "5"},
                {"SLURM_STEP_ID", "1"},
                {"SLURM_RESTART_COUNT", "0"}};
  ASSERT_TRUE(SaveInWatchdogDir(env, "summary.txt", "run 1\n").ok());
  env["SLURM_RESTART_COUNT"] = "2";
  ASSERT_TRUE(SaveInWatchdogDir(env, "preflight.txt", "run 3\n").ok());
  EXPECT_EQ(Text(dir.path() + "/dist-train-watchdog-5.1/summary.txt"),
            "run 1\n");
  EXPECT_EQ(Text(dir.path() + "/dist-train-watchdog-5.1.r2/preflight.txt"),
            "run 3\n");
  struct stat st {};
  EXPECT_NE(
      stat((dir.path() + "/dist-train-watchdog-5.1.r2/summary.txt").c_str(),
           &st),
      0)
      << "the run before's summary is not this run's";
  env["SLURM_RESTART_COUNT"] = "two";
  EXPECT_NE(
      SaveInWatchdogDir(env, "x", "x").message().find("SLURM_RESTART_COUNT"),
      std::string::npos);
}

TEST(WatchdogTest, AStepDirectoryOfSomeoneElseIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to plant another owner's dir";
  testing_files::TempDir dir;
  std::string planted =
      dir.path() + "/dist-train-watchdog-pid" + std::to_string(getpid()) + ".0";
  ASSERT_EQ(mkdir(planted.c_str(), 0777), 0);
  ASSERT_EQ(chown(planted.c_str(), 65534, 65534), 0);
  Status s = StartWatchdog(Quick(dir.path()));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(planted), std::string::npos) << s.message();
  EXPECT_FALSE(WatchdogRunning());
}

}  // namespace
}  // namespace dist_train
