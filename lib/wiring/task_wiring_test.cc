// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/task_wiring.h"

#include <gtest/gtest.h>

#include <string>

#include "binding/plan_report.h"

namespace dist_train {
namespace {

// Task 1 (second on node1) of step 1000.3 on node[1-2], 2 tasks per node.
SlurmInputs TaskOne() {
  SlurmInputs in;
  in.job_id = 1000;
  in.step_id = 3;
  in.step_nnodes = 2;
  in.local_tasks = 2;
  in.total_tasks = 4;
  in.cpus_per_task = 2;
  in.local_task_id = 1;
  in.global_task_id = 1;
  in.env = {{"SLURM_STEP_NODELIST", "node[1-2]"},
            {"SLURM_PROCID", "1"},
            {"SLURM_LOCALID", "1"},
            {"SLURM_NODEID", "0"},
            {"SLURMD_NODENAME", "node1"},
            {"DT_JOB_TOKEN", std::string(64, 'a')}};
  return in;
}

JobOptions Words(const char* text) {
  JobOptions o;
  EXPECT_TRUE(ParseJobOptions(text, &o).ok()) << text;
  return o;
}

TEST(WireTaskTest, AppliesTheContractThroughTheSinkAndFillsTheRelayTask) {
  SlurmInputs in = TaskOne();
  MapEnvSink sink;
  sink.env["DT_GPU"] = "stale";  // an enclosing step's, not this one's
  RelayTask relay;
  testing::internal::CaptureStderr();
  Status s = WireTask({}, Words("on"), NodeBinding(), &in, sink, &relay);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sink.env["RANK"], "1");
  EXPECT_EQ(sink.env["LOCAL_RANK"], "1");
  EXPECT_EQ(sink.env["WORLD_SIZE"], "4");
  EXPECT_EQ(sink.env["MASTER_ADDR"], "node1");
  EXPECT_EQ(sink.env["OMP_NUM_THREADS"], "2");
  EXPECT_EQ(relay.step_id, 3u);
  EXPECT_EQ(relay.local_task_id, 1u);
  EXPECT_EQ(relay.global_task_id, 1u);
  EXPECT_FALSE(relay.verbose);
}

TEST(WireTaskTest, VerbosePrintsTheSummaryAndTellsTheRelay) {
  SlurmInputs in = TaskOne();
  MapEnvSink sink;
  RelayTask relay;
  testing::internal::CaptureStderr();
  ASSERT_TRUE(
      WireTask({}, Words("verbose"), NodeBinding(), &in, sink, &relay).ok());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("dist-train: node1 step 1000.3 rank 1/4 local 1/2 ", 0),
            0u)
      << err;
  EXPECT_EQ(err.find(std::string(64, 'a')), std::string::npos) << "token";
  EXPECT_TRUE(relay.verbose);
}

TEST(WireTaskTest, AnErrorFailsTheTaskNamingTheInput) {
  SlurmInputs in = TaskOne();
  in.env["SLURM_STEP_NODELIST"] = "node[1-";
  MapEnvSink sink;
  RelayTask relay;
  Status s = WireTask({}, Words("on"), NodeBinding(), &in, sink, &relay);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("SLURM_STEP_NODELIST"), std::string::npos)
      << s.message();
  EXPECT_EQ(sink.env.count("RANK"), 0u);  // nothing applied
}

TEST(TaskReportTest, SaysEachThingOnceWhereItBelongs) {
  NodeBinding bound;
  bound.bound = true;
  bound.topology_source = "t.xml";
  bound.note = "dist-train: binding: a plan warning";
  EnvPlan quiet, verbose;
  quiet.warnings = verbose.warnings = {"dist-train: warning: W"};
  verbose.verbose = true;
  verbose.summary = "dist-train: SUMMARY";
  SlurmInputs first = TaskOne(), second = TaskOne(), other_node = TaskOne();
  first.local_task_id = 0;
  other_node.local_task_id = 0;
  other_node.node_id = 1;
  const std::string table = PlanTable(bound.model, bound.plan);
  struct Case {
    const char* name;
    const EnvPlan& plan;
    const SlurmInputs& in;
    std::string affinity, want;
  } cases[] = {
      {"the step's first task: note and warnings", quiet, first, "",
       "dist-train: binding: a plan warning\ndist-train: warning: W\n"},
      {"a second task: nothing", quiet, second, "", ""},
      {"a node's first task: its note only", quiet, other_node, "",
       "dist-train: binding: a plan warning\n"},
      {"an affinity warning in any task", quiet, second, "dist-train: A",
       "dist-train: A\n"},
      {"verbose first task: summary, table, note, warnings", verbose, first, "",
       "dist-train: SUMMARY\ndist-train: binding on node1 (topology: "
       "t.xml):\n" +
           table +
           "dist-train: binding: a plan warning\ndist-train: warning: W\n"},
      {"verbose second task: summary and warnings", verbose, second, "",
       "dist-train: SUMMARY\ndist-train: warning: W\n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(TaskReport(bound, c.plan, c.in, c.affinity), c.want) << c.name;
  }
  NodeBinding unbound;
  EXPECT_EQ(TaskReport(unbound, verbose, first, ""),
            "dist-train: SUMMARY\ndist-train: warning: W\n");
}

}  // namespace
}  // namespace dist_train
