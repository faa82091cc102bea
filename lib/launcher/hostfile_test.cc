// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/hostfile.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(HostfileTest, NodesInOrderWithTheirSlots) {
  std::string out;
  EnvMap env = {{"SLURM_JOB_NODELIST", "gpu[09-10],a1"},
                {"SLURM_TASKS_PER_NODE", "4(x2),2"}};
  ASSERT_TRUE(DeepSpeedHostfile(env, std::nullopt, &out).ok());
  EXPECT_EQ(out, "gpu09 slots=4\ngpu10 slots=4\na1 slots=2\n");
  env["SLURM_GPUS_ON_NODE"] = "8";  // GPUs win over tasks
  ASSERT_TRUE(DeepSpeedHostfile(env, std::nullopt, &out).ok());
  EXPECT_EQ(out, "gpu09 slots=8\ngpu10 slots=8\na1 slots=8\n");
  ASSERT_TRUE(DeepSpeedHostfile(env, 2u, &out).ok());  // nproc=2
  EXPECT_EQ(out, "gpu09 slots=2\ngpu10 slots=2\na1 slots=2\n");
  env["SLURM_STEP_NODELIST"] = "n1";  // inside a step: the step's nodes
  ASSERT_TRUE(DeepSpeedHostfile(env, std::nullopt, &out).ok());
  EXPECT_EQ(out, "n1 slots=8\n");
}

TEST(HostfileTest, ErrorsNameTheVariable) {
  std::string out = "kept";
  EXPECT_EQ(DeepSpeedHostfile({}, std::nullopt, &out).message(),
            "SLURM_JOB_NODELIST is not set: --hostfile runs inside a Slurm "
            "job");
  EXPECT_EQ(
      DeepSpeedHostfile({{"SLURM_JOB_NODELIST", "n[1-"}}, std::nullopt, &out)
          .message(),
      "SLURM_JOB_NODELIST='n[1-' is not a valid Slurm node list");
  EXPECT_NE(DeepSpeedHostfile(
                {{"SLURM_JOB_NODELIST", "n1"}, {"SLURM_GPUS_ON_NODE", "x"}},
                std::nullopt, &out)
                .message()
                .find("SLURM_GPUS_ON_NODE='x'"),
            std::string::npos);
  EXPECT_EQ(out, "kept");
}

}  // namespace
}  // namespace dist_train
