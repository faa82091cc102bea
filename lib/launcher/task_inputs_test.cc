// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/task_inputs.h"

#include <gtest/gtest.h>

#include "base/slurm_ids.h"

namespace dist_train {
namespace {

// Rank 5 of `srun -N3 --ntasks-per-node=2` (6 tasks), on the third node.
EnvMap StepTask() {
  return {{"SLURM_JOB_ID", "812"},       {"SLURM_STEP_ID", "3"},
          {"SLURM_STEP_NUM_NODES", "3"}, {"SLURM_NODEID", "2"},
          {"SLURM_STEP_NUM_TASKS", "6"}, {"SLURM_LOCALID", "1"},
          {"SLURM_PROCID", "5"},         {"SLURM_STEP_TASKS_PER_NODE", "2(x3)"},
          {"SLURM_GTIDS", "4,5"},        {"HOME", "/home/u"}};
}

TEST(TaskInputsTest, EveryItemFromItsVariable) {
  EnvMap env = StepTask();
  env["SLURM_CPUS_PER_TASK"] = "4";
  SlurmInputs in;
  ASSERT_TRUE(TaskInputsFromEnv(env, &in).ok());
  EXPECT_EQ(in.job_id, 812u);
  EXPECT_EQ(in.step_id, 3u);
  EXPECT_EQ(in.step_nnodes, 3u);
  EXPECT_EQ(in.node_id, 2u);
  EXPECT_EQ(in.total_tasks, 6u);
  EXPECT_EQ(in.local_tasks, 2u);
  EXPECT_EQ(in.local_task_id, 1u);
  EXPECT_EQ(in.global_task_id, 5u);
  EXPECT_EQ(in.cpus_per_task, 4u);
  EXPECT_EQ(in.env.at("HOME"), "/home/u");
}

TEST(TaskInputsTest, CpusPerTaskDefaultsToSlurmsOne) {
  SlurmInputs in;
  ASSERT_TRUE(TaskInputsFromEnv(StepTask(), &in).ok());
  EXPECT_EQ(in.cpus_per_task, 1u);
}

TEST(TaskInputsTest, TheBatchScriptIsToldToUseSrun) {
  EnvMap env = StepTask();
  env.erase("SLURM_STEP_ID");
  SlurmInputs in;
  Status s = TaskInputsFromEnv(env, &in);
  EXPECT_NE(s.message().find("SLURM_STEP_ID is not set"), std::string::npos);
  EXPECT_NE(s.message().find("srun dt-wire -- PROGRAM"), std::string::npos);
  env["SLURM_STEP_ID"] = "-5";  // 26.05's batch script
  s = TaskInputsFromEnv(env, &in);
  EXPECT_EQ(s.message(),
            "SLURM_STEP_ID=-5 is not an srun step: dt-wire runs as an srun "
            "task, not in the batch script (srun dt-wire -- PROGRAM ...)");
}

TEST(TaskInputsTest, BadValuesNameTheVariable) {
  const std::pair<const char*, const char*> cases[] = {
      {"SLURM_JOB_ID", "12x"},
      {"SLURM_STEP_ID", "-1"},
      {"SLURM_NODEID", ""},
      {"SLURM_PROCID", "five"},
      {"SLURM_STEP_TASKS_PER_NODE", "2(x"},
      {"SLURM_CPUS_PER_TASK", "0"}};
  for (const auto& [name, value] : cases) {
    EnvMap env = StepTask();
    env[name] = value;
    SlurmInputs in;
    in.job_id = 99;
    Status s = TaskInputsFromEnv(env, &in);
    EXPECT_FALSE(s.ok()) << name;
    EXPECT_NE(s.message().find(name), std::string::npos) << s.message();
    EXPECT_EQ(in.job_id, 99u) << "untouched on error";
  }
}

TEST(TaskInputsTest, MissingCountsAreNamed) {
  for (const char* name :
       {"SLURM_JOB_ID", "SLURM_STEP_NUM_NODES", "SLURM_NODEID",
        "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_PROCID",
        "SLURM_STEP_TASKS_PER_NODE"}) {
    EnvMap env = StepTask();
    env.erase(name);
    SlurmInputs in;
    Status s = TaskInputsFromEnv(env, &in);
    EXPECT_EQ(s.message().rfind(std::string(name) + " is not set", 0), 0u)
        << s.message();
  }
}

TEST(TaskInputsTest, LocalGlobalRanksAreDistinctAndInRange) {
  std::vector<uint32_t> ranks;
  ASSERT_TRUE(LocalGlobalRanks(StepTask(), 2, 6, &ranks).ok());
  EXPECT_EQ(ranks, (std::vector<uint32_t>{4, 5}));
  EnvMap env = StepTask();
  for (const char* bad : {"4,4", "4", "4,6", "4,x", ""}) {
    env["SLURM_GTIDS"] = bad;
    EXPECT_FALSE(LocalGlobalRanks(env, 2, 6, &ranks).ok()) << bad;
  }
  env.erase("SLURM_GTIDS");
  EXPECT_FALSE(LocalGlobalRanks(env, 2, 6, &ranks).ok());
}

TEST(TaskInputsTest, BindRequestTakesTheStepsGpusAndGpusPerTask) {
  EnvMap env = StepTask();
  BindParts parts;
  BindRequest req;
  ASSERT_TRUE(BindRequestFromEnv(env, 2, parts, &req).ok());
  EXPECT_EQ(req.ntasks, 2u);
  EXPECT_FALSE(req.gpus.has_value());
  EXPECT_EQ(req.gpus_per_task, 0u);
  EXPECT_FALSE(req.cpus.has_value());
  env["SLURM_STEP_GPUS"] = "0,2-3";
  env["SLURM_GPUS_PER_TASK"] = "a100:2";
  ASSERT_TRUE(BindRequestFromEnv(env, 2, parts, &req).ok());
  EXPECT_EQ(*req.gpus, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(req.gpus_per_task, 2u);
  env["SLURM_STEP_GPUS"] = "0,a";
  Status s = BindRequestFromEnv(env, 2, parts, &req);
  EXPECT_NE(s.message().find("SLURM_STEP_GPUS"), std::string::npos);
}

}  // namespace
}  // namespace dist_train
