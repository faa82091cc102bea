// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/task_preflight.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "testing/testing_files.h"

namespace dist_train {
namespace {

std::string Script(const testing_files::TempDir& dir, const std::string& body) {
  std::string path = dir.path() + "/dt-preflight";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(TaskPreflightTest, CommandCarriesTheTaskAndItsEnvironment) {
  PreflightSetting set{45, PreflightPolicy::kFail, {}};
  PreflightTask task{7, 2, 5, 8, false};
  PreflightCommand cmd =
      PreflightCommandFor("/usr/bin/dt-preflight", set, task, {"A=1"});
  EXPECT_EQ(cmd.program, "/usr/bin/dt-preflight");
  EXPECT_EQ(cmd.args,
            (std::vector<std::string>{
                "--seconds", "45", "--policy", "fail", "--rank", "5", "--size",
                "8", "--probe", "0", "--identity", "slurm:7.2:preflight"}));
  EXPECT_EQ(cmd.env, std::vector<std::string>{"A=1"});
  EXPECT_EQ(cmd.deadline_seconds, 60);
}

TEST(TaskPreflightTest, CommandCarriesTheSitesMinimums) {
  PreflightSetting set{45, PreflightPolicy::kWarn, {2.5, 0, 100000}};
  PreflightCommand cmd =
      PreflightCommandFor("/usr/bin/dt-preflight", set, PreflightTask(), {});
  std::vector<std::string> tail(cmd.args.end() - 4, cmd.args.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"--min-cpu-gflops", "2.5",
                                            "--min-link-mbps", "100000"}));
  set.baseline = {0, 12, 0};
  cmd = PreflightCommandFor("/usr/bin/dt-preflight", set, PreflightTask(), {});
  tail.assign(cmd.args.end() - 3, cmd.args.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"slurm:0.0:preflight",
                                            "--min-mem-gbps", "12"}));
}

TEST(TaskPreflightTest, RunsWithExactlyTheGivenEnvironmentAndArguments) {
  testing_files::TempDir dir;
  std::string out = dir.path() + "/seen";
  PreflightCommand cmd;
  cmd.program =
      Script(dir, "echo \"$MASTER_PORT $HOME $*\" > " + out + "; exit 3");
  cmd.args = {"--rank", "1"};
  cmd.env = {"MASTER_PORT=20123"};
  cmd.deadline_seconds = 10;
  int code = 0;
  ASSERT_TRUE(RunPreflightCommand(cmd, &code).ok());
  EXPECT_EQ(code, 3);
  EXPECT_EQ(Read(out), "20123  --rank 1\n");
}

TEST(TaskPreflightTest, KillsAProgramPastItsDeadline) {
  testing_files::TempDir dir;
  PreflightCommand cmd;
  cmd.program = Script(dir, "exec sleep 30");
  cmd.deadline_seconds = 0.3;
  int code = 0;
  Status s = RunPreflightCommand(cmd, &code);
  EXPECT_EQ(s.code(), Status::Code::kTimeout);
  EXPECT_EQ(s.message(), "preflight: " + cmd.program +
                             " did not finish in 0 s and was killed");
  EXPECT_EQ(code, -1);
  cmd.program = dir.path() + "/absent";
  s = RunPreflightCommand(cmd, &code);
  EXPECT_EQ(s.message(), "preflight: cannot run " + cmd.program +
                             ": No such file or directory");
}

TEST(TaskPreflightTest, PolicyDecidesWhetherTheProgramStarts) {
  PreflightSetting fail{60, PreflightPolicy::kFail, {}};
  PreflightSetting warn{60, PreflightPolicy::kWarn, {}};
  std::string warning;
  EXPECT_TRUE(PreflightOutcome(fail, Status::OK(), 0, &warning).ok());
  EXPECT_EQ(warning, "");
  Status s = PreflightOutcome(fail, Status::OK(), 3, &warning);
  EXPECT_EQ(s.message(),
            "preflight failed (see its report above); preflight-policy=fail: "
            "the program was not started");
  s = PreflightOutcome(fail, Status::Timeout("preflight: x did not finish"), -1,
                       &warning);
  EXPECT_EQ(s.message(),
            "preflight: x did not finish; preflight-policy=fail: the program "
            "was not started");
  PreflightSetting requeue{60, PreflightPolicy::kRequeue, {}};
  s = PreflightOutcome(requeue, Status::OK(), 3, &warning);
  EXPECT_EQ(
      s.message(),
      "preflight failed (see its report above); preflight-policy=requeue: "
      "the program was not started");
  EXPECT_TRUE(PreflightOutcome(warn, Status::OK(), 2, &warning).ok());
  EXPECT_EQ(warning,
            "preflight: dt-preflight refused its arguments or environment; "
            "preflight-policy=warn: starting the program");
  EXPECT_TRUE(PreflightOutcome(warn, Status::OK(), 9, &warning).ok());
  EXPECT_EQ(warning,
            "preflight: dt-preflight exited with status 9; "
            "preflight-policy=warn: starting the program");
}

}  // namespace
}  // namespace dist_train
