// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/preflight.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "testing/testing_files.h"
#include "testing/testing_ranks.h"
#include "testing/testing_requeue.h"

namespace dist_train {
namespace {

using testing_requeue::RecordingOps;

TEST(PreflightRecordTest, RoundTripsAndRefusesMalformedRecords) {
  NodeProbe p;
  p.host = "node12";
  p.cpu_gflops = 2.5;
  p.mem_gbps = 11.25;
  p.gpus_expected = 8;
  p.gpus_found = 7;
  p.nic = "ib0";
  p.nic_up = false;
  p.nic_state = "down";
  p.nic_speed_mbps = 200000;
  std::string rec = EncodeProbe(p, true);
  ASSERT_EQ(rec.size(), kProbeRecordBytes);
  NodeProbe q;
  bool measured = false;
  ASSERT_TRUE(DecodeProbe(rec, &q, &measured));
  EXPECT_TRUE(measured);
  EXPECT_EQ(q.host, "node12");
  EXPECT_EQ(q.cpu_gflops, 2.5);
  EXPECT_EQ(q.mem_gbps, 11.25);
  EXPECT_EQ(q.gpus_found, 7);
  EXPECT_EQ(q.nic, "ib0");
  EXPECT_FALSE(q.nic_up);
  EXPECT_EQ(q.nic_state, "down");
  EXPECT_EQ(q.nic_speed_mbps, 200000);

  std::string wrong = rec;
  wrong[0] = 'X';
  EXPECT_FALSE(DecodeProbe(wrong, &q, &measured));
  EXPECT_FALSE(DecodeProbe(rec.substr(1), &q, &measured));
  p.cpu_gflops = std::nan("");
  EXPECT_FALSE(DecodeProbe(EncodeProbe(p, true), &q, &measured));
  p.cpu_gflops = 1;
  p.gpus_found = 5000;
  EXPECT_FALSE(DecodeProbe(EncodeProbe(p, true), &q, &measured));
  // An unterminated host is cut at its field.
  p.gpus_found = 1;
  p.host = std::string(300, 'h');
  ASSERT_TRUE(DecodeProbe(EncodeProbe(p, true), &q, &measured));
  EXPECT_EQ(q.host, std::string(95, 'h'));
}

TEST(PreflightRunTest, ResolvesFromSlurmAndNamesWhatIsMissing) {
  EnvMap env = {{"SLURM_PROCID", "3"},
                {"SLURM_NTASKS", "8"},
                {"SLURM_LOCALID", "1"},
                {"SLURM_JOB_ID", "42"},
                {"SLURM_STEP_ID", "0"}};
  PreflightRun run;
  ASSERT_TRUE(ResolvePreflightRun(env, &run).ok());
  EXPECT_EQ(run.rank, 3);
  EXPECT_EQ(run.size, 8);
  EXPECT_EQ(run.probe, 0);
  EXPECT_EQ(run.identity, "slurm:42.0:preflight");

  PreflightRun missing;
  env.erase("SLURM_NTASKS");
  Status s = ResolvePreflightRun(env, &missing);
  EXPECT_EQ(s.message(), "SLURM_NTASKS is not set");
  PreflightRun over;
  env["SLURM_NTASKS"] = "3";
  EXPECT_EQ(ResolvePreflightRun(env, &over).message(),
            "rank 3 is not below 3 tasks");
}

// Three tasks on loopback, two of them probing as two nodes; returns each
// task's exit status and task 0's report.
// No CPU or memory rate counts as slow (`slow_fraction` 0), so no test
// depends on how busy the machine is: the 50 ms probes of two "nodes"
// sharing a loaded CI machine have differed by more than 3x, which named
// nodeA slow beside nodeB's missing GPUs. Rates are scored in
// preflight_score_test.cc; here only missing GPUs make a node bad.
std::vector<int> RunThree(PreflightPolicy policy, const char* gpus_of_b,
                          std::string* report, const EnvMap& extra = {},
                          const RequeueOps& ops = RequeueOps()) {
  testing_files::TempDir dir;
  int port = testing_ranks::FreePort();
  std::vector<pid_t> pids;
  for (int r = 0; r < 3; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      EnvMap env = {{"MASTER_ADDR", "127.0.0.1"},
                    {"MASTER_PORT", std::to_string(port)},
                    {"DT_JOB_TOKEN", testing_ranks::kToken},
                    {"SLURMD_NODENAME", r == 2 ? "nodeB" : "nodeA"}};
      if (r == 2 && gpus_of_b) env["CUDA_VISIBLE_DEVICES"] = gpus_of_b;
      env.insert(extra.begin(), extra.end());
      PreflightRun run;
      run.requeue_ops = ops;
      run.score.slow_fraction = 0;
      run.seconds = 20;
      run.policy = policy;
      run.rank = r;
      run.size = 3;
      run.probe = r == 1 ? 0 : 1;
      run.identity = "test:preflight";
      run.probe_seconds = 0.05;
      FILE* out = fopen((dir.path() + "/out" + std::to_string(r)).c_str(), "w");
      int rc = RunPreflight(env, run, out);
      fclose(out);
      _exit(rc);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  std::ifstream in(dir.path() + "/out0");
  std::ostringstream text;
  text << in.rdbuf();
  *report = text.str();
  return codes;
}

TEST(PreflightRunTest, CleanTasksPassAndTaskZeroReports) {
  std::string report;
  EXPECT_EQ(RunThree(PreflightPolicy::kFail, nullptr, &report),
            (std::vector<int>{0, 0, 0}));
  EXPECT_NE(report.find("dist-train: preflight: passed: 2 nodes, median CPU "),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("dist-train: preflight: network: 3 ranks ("),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("dist-train: preflight: took "), std::string::npos);
}

TEST(PreflightRunTest, MissingGpusFailEveryTaskUnderFailOnly) {
  // No machine has 64 GPUs: nodeB is short of what it was given.
  std::string many = "0";
  for (int i = 1; i < 64; ++i) many += "," + std::to_string(i);
  std::string report;
  EXPECT_EQ(RunThree(PreflightPolicy::kFail, many.c_str(), &report),
            (std::vector<int>{3, 3, 3}));
  EXPECT_NE(report.find("dist-train: preflight: 1 of 2 nodes is bad or slow:\n"
                        "  nodeB: "),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(" of 64 GPUs usable"), std::string::npos) << report;
  EXPECT_NE(report.find("policy fail: the step ends before the program"),
            std::string::npos);
  EXPECT_EQ(RunThree(PreflightPolicy::kWarn, many.c_str(), &report),
            (std::vector<int>{0, 0, 0}));
  EXPECT_NE(report.find("nodeB: "), std::string::npos) << report;
}

std::string SixtyFourGpus() {
  std::string many = "0";
  for (int i = 1; i < 64; ++i) many += "," + std::to_string(i);
  return many;
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PreflightRunTest, RequeuePolicyRequeuesWithoutTheBadNodeOnce) {
  testing_files::TempDir dir;
  std::string calls = dir.path() + "/calls", report;
  EXPECT_EQ(RunThree(PreflightPolicy::kRequeue, SixtyFourGpus().c_str(),
                     &report, {{"SLURM_JOB_ID", "42"}}, RecordingOps(calls)),
            (std::vector<int>{3, 3, 3}));
  EXPECT_EQ(FileText(calls), "load 42\nrequeue 42\nset 42 nodeB,nodeZ\n");
  EXPECT_NE(report.find("policy requeue: the step ends before the program "
                        "starts, and the job is requeued without the bad "
                        "nodes\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("dist-train: preflight: requeueing job 42 (requeue 1 "
                        "of 3) without nodeB\n"
                        "dist-train: preflight: job 42 requeued; its "
                        "ExcNodeList is now nodeB,nodeZ\n"),
            std::string::npos)
      << report;
}

TEST(PreflightRunTest, RequeuePolicyStopsAtTheLimit) {
  testing_files::TempDir dir;
  std::string calls = dir.path() + "/calls", report;
  EXPECT_EQ(
      RunThree(PreflightPolicy::kRequeue, SixtyFourGpus().c_str(), &report,
               {{"SLURM_JOB_ID", "42"},
                {"SLURM_RESTART_COUNT", "2"},
                {"DT_MAX_REQUEUES", "2"}},
               RecordingOps(calls)),
      (std::vector<int>{3, 3, 3}));
  EXPECT_EQ(FileText(calls), "load 42\n");  // the history line only
  EXPECT_NE(report.find("dist-train: preflight: not requeued: job 42 was "
                        "requeued 2 times (limit 2, DT_MAX_REQUEUES)\n"),
            std::string::npos)
      << report;
}

TEST(PreflightRunTest, RequeuePolicyWithACleanStepStartsTheProgram) {
  testing_files::TempDir dir;
  std::string calls = dir.path() + "/calls", report;
  EXPECT_EQ(RunThree(PreflightPolicy::kRequeue, nullptr, &report,
                     {{"SLURM_JOB_ID", "42"}}, RecordingOps(calls)),
            (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(FileText(calls), "");
  EXPECT_EQ(report.find("ExcNodeList"), std::string::npos) << report;
}

TEST(PreflightRunTest, ARequeuedRunSaysWhereTheJobStands) {
  testing_files::TempDir dir;
  std::string calls = dir.path() + "/calls", report;
  EXPECT_EQ(RunThree(PreflightPolicy::kRequeue, nullptr, &report,
                     {{"SLURM_JOB_ID", "42"}, {"SLURM_RESTART_COUNT", "1"}},
                     RecordingOps(calls)),
            (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(FileText(calls), "load 42\n");
  EXPECT_NE(report.find("dist-train: preflight: run 2 of job 42 (requeued 1 "
                        "of at most 3 times); its ExcNodeList is nodeZ\n"),
            std::string::npos)
      << report;
}

TEST(PreflightRunTest, AMissingTaskEndsInTimeWithTheReason) {
  testing_files::TempDir dir;
  std::string path = dir.path() + "/out";
  FILE* out = fopen(path.c_str(), "w");
  EnvMap env = {{"MASTER_ADDR", "127.0.0.1"},
                {"MASTER_PORT", std::to_string(testing_ranks::FreePort())}};
  PreflightRun run;
  run.seconds = 1;
  run.rank = 1;  // rank 0 never comes
  run.size = 2;
  run.probe = 1;
  run.identity = "test:alone";
  run.policy = PreflightPolicy::kFail;
  EXPECT_EQ(RunPreflight(env, run, out), kPreflightFailed);
  run.policy = PreflightPolicy::kWarn;
  EXPECT_EQ(RunPreflight(env, run, out), kPreflightPassed);
  fclose(out);
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(
      line.rfind("dist-train: preflight: rank 1: could not complete: ", 0), 0u)
      << line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_NE(line.find("(policy warn: starting the program)"),
            std::string::npos);
}

}  // namespace
}  // namespace dist_train
