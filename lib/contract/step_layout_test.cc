// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/step_layout.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(StepLayoutTest, TasksOnNodeWalksRepeatedRuns) {
  uint32_t n = 0;
  const char* list = "2(x3),1,4(x2)";
  const uint32_t want[] = {2, 2, 2, 1, 4, 4};
  for (uint32_t node = 0; node < 6; ++node) {
    ASSERT_TRUE(TasksOnNode(list, node, "V", &n).ok()) << node;
    EXPECT_EQ(n, want[node]) << node;
  }
  Status s = TasksOnNode(list, 6, "V", &n);
  EXPECT_EQ(s.message(), "V='2(x3),1,4(x2)' has no node 6");
  for (const char* bad : {"", "2(x0)", "2(3)", "x", "2(x3", "1,,2", "-1"}) {
    EXPECT_FALSE(TasksOnNode(bad, 0, "V", &n).ok()) << bad;
  }
}

TEST(StepLayoutTest, ExpandTasksPerNodeGivesEveryNodeAndRefusesHuge) {
  std::vector<uint32_t> counts;
  ASSERT_TRUE(ExpandTasksPerNode("2(x3),1", "V", &counts).ok());
  EXPECT_EQ(counts, (std::vector<uint32_t>{2, 2, 2, 1}));
  EXPECT_EQ(ExpandTasksPerNode("1(x4294967295)", "V", &counts).message(),
            "V='1(x4294967295)' names more than 65536 nodes");
  EXPECT_EQ(ExpandTasksPerNode("2,x", "V", &counts).message(),
            "V='2,x' is not a tasks-per-node list such as 2(x3),1");
  EXPECT_EQ(counts, (std::vector<uint32_t>{2, 2, 2, 1})) << "untouched";
}

EnvMap Task(const std::string& procid, const std::string& nodeid,
            const std::string& localid) {
  return {{"SLURM_STEP_NODELIST", "node[2-4]"},
          {"SLURM_STEP_TASKS_PER_NODE", "2,3,1"},
          {"SLURM_PROCID", procid},
          {"SLURM_NODEID", nodeid},
          {"SLURM_LOCALID", localid}};
}

TEST(StepLayoutTest, EveryRankHasTheHostOfItsBlock) {
  StepLayout l;
  ASSERT_TRUE(ReadStepLayout(Task("3", "1", "1"), &l).ok());
  const char* want[] = {"node2", "node2", "node3", "node3", "node3", "node4"};
  for (uint32_t r = 0; r < 6; ++r) EXPECT_EQ(l.HostOf(r), want[r]) << r;
  EXPECT_EQ(l.HostOf(6), "");
}

TEST(StepLayoutTest, ACyclicLayoutIsRefusedNotGuessed) {
  StepLayout l;
  // srun -m cyclic: rank 1 is node 1's first task.
  Status s = ReadStepLayout(Task("1", "1", "0"), &l);
  EXPECT_EQ(s.message(),
            "the step's ranks are not laid out in blocks (SLURM_PROCID=1 is "
            "local rank 0 of node 1, whose first rank is 2): a cyclic "
            "distribution?");
  EXPECT_TRUE(l.hosts.empty());
}

// dt-run or torchrun on each of 3 nodes, 4 workers each: worker 6 is
// node 1's local rank 2; the Slurm task (one per node) is node 1's.
EnvMap Worker(const std::string& rank) {
  return {{"SLURM_STEP_NODELIST", "node[2-4]"},
          {"SLURM_STEP_TASKS_PER_NODE", "1(x3)"},
          {"SLURM_PROCID", "1"},
          {"SLURM_NODEID", "1"},
          {"SLURM_LOCALID", "0"},
          {"RANK", rank},
          {"NODE_RANK", "1"},
          {"LOCAL_RANK", "2"},
          {"LOCAL_WORLD_SIZE", "4"}};
}

TEST(StepLayoutTest, ALaunchersWorkersAreLocalWorldSizeToANode) {
  StepLayout l;
  ASSERT_TRUE(ReadStepLayout(Worker("6"), &l).ok());
  EXPECT_EQ(l.tasks, (std::vector<uint32_t>{4, 4, 4}));
  EXPECT_EQ(l.HostOf(3), "node2");
  EXPECT_EQ(l.HostOf(4), "node3");
  EXPECT_EQ(l.HostOf(11), "node4");
  EXPECT_EQ(ReadStepLayout(Worker("5"), &l).message(),
            "the step's ranks are not laid out in blocks (RANK=5 is local "
            "rank 2 of node 1, whose first rank is 4): a cyclic "
            "distribution?");
  EnvMap env = Worker("6");
  env.erase("LOCAL_WORLD_SIZE");
  EXPECT_EQ(ReadStepLayout(env, &l).message(), "LOCAL_WORLD_SIZE is not set");
  env["LOCAL_WORLD_SIZE"] = "0";
  EXPECT_EQ(ReadStepLayout(env, &l).message(),
            "LOCAL_WORLD_SIZE=0 is not a number of workers");
}

// Rank 0 of a launcher has RANK=0 like its Slurm task: the world size
// tells (12 workers, 3 tasks), not the rank.
TEST(StepLayoutTest, ALaunchersRankZeroIsAWorkerToo) {
  EnvMap env = Worker("0");
  env["SLURM_PROCID"] = env["SLURM_NODEID"] = env["NODE_RANK"] = "0";
  env["LOCAL_RANK"] = "0";
  env["WORLD_SIZE"] = "12";
  env["SLURM_STEP_NUM_TASKS"] = "3";
  StepLayout l;
  ASSERT_TRUE(ReadStepLayout(env, &l).ok());
  EXPECT_EQ(l.tasks, (std::vector<uint32_t>{4, 4, 4}));
  EXPECT_EQ(l.HostOf(4), "node3");
  env["WORLD_SIZE"] = "3";  // one worker per task: the tasks' layout
  ASSERT_TRUE(ReadStepLayout(env, &l).ok());
  EXPECT_EQ(l.tasks, (std::vector<uint32_t>{1, 1, 1}));
}

TEST(StepLayoutTest, MissingAndDisagreeingVariablesAreNamed) {
  StepLayout l;
  EnvMap env = Task("0", "0", "0");
  env["SLURM_STEP_TASKS_PER_NODE"] = "2(x2)";
  EXPECT_EQ(ReadStepLayout(env, &l).message(),
            "SLURM_STEP_TASKS_PER_NODE='2(x2)' covers 2 nodes, "
            "SLURM_STEP_NODELIST 3");
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_STEP_TASKS_PER_NODE",
                           "SLURM_PROCID", "SLURM_NODEID", "SLURM_LOCALID"}) {
    env = Task("0", "0", "0");
    env.erase(name);
    EXPECT_EQ(ReadStepLayout(env, &l).message(),
              std::string(name) + " is not set");
  }
  env = Task("0", "7", "0");
  EXPECT_EQ(ReadStepLayout(env, &l).message(),
            "SLURM_NODEID=7 is past the step's 3 nodes");
}

}  // namespace
}  // namespace dist_train
