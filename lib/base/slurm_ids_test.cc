// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/slurm_ids.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(ParseSlurmStepIdTest, NumbersAndTheNegativeSpecialIdsOf2605) {
  uint32_t id = 0;
  ASSERT_TRUE(ParseSlurmStepId("0", &id));
  EXPECT_EQ(id, 0u);
  ASSERT_TRUE(ParseSlurmStepId("4294967291", &id));
  EXPECT_EQ(id, kBatchStepId);
  ASSERT_TRUE(ParseSlurmStepId("-5", &id));
  EXPECT_EQ(id, kBatchStepId);
  ASSERT_TRUE(ParseSlurmStepId("-4", &id));
  EXPECT_EQ(id, kExternStepId);
  ASSERT_TRUE(ParseSlurmStepId("-6", &id));
  EXPECT_EQ(id, kInteractiveStepId);
  id = 7;
  for (const char* bad :
       {"", "-", "-0", "-17", "--5", "4294967296", "x", "5 ", "+5"}) {
    EXPECT_FALSE(ParseSlurmStepId(bad, &id)) << bad;
  }
  EXPECT_EQ(id, 7u);
}

TEST(JobOrStepVarTest, TheBatchStepReadsTheJobsVariables) {
  EXPECT_EQ(JobOrStepVar(kBatchStepId, "NODELIST"), "SLURM_JOB_NODELIST");
  EXPECT_EQ(JobOrStepVar(0, "NODELIST"), "SLURM_STEP_NODELIST");
  EXPECT_EQ(JobOrStepVar(kExternStepId, "GPUS"), "SLURM_STEP_GPUS");
}

}  // namespace
}  // namespace dist_train
