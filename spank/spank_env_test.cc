// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "spank_env.h"

#include <gtest/gtest.h>

#include "fake_spank_host.h"

namespace dist_train {
namespace {

TEST(SpankEnvTest, ReadsValuesWholeUpToTheirCap) {
  struct Case {
    const char* name;
    size_t size;
    bool whole;  // read in full, else refused
  } cases[] = {
      {"SLURM_STEP_NODELIST", 0, true},
      {"SLURM_STEP_NODELIST", 4095, true},
      {"SLURM_STEP_NODELIST", 4096, true},
      {"SLURM_STEP_NODELIST", 70000, true},
      {"SLURM_JOB_NODELIST", 1 << 20, true},
      {"SLURM_STEP_NODELIST", (1 << 20) + 1, false},
      {"SLURM_STEP_NODELIST", 1 << 22, false},
      {"SLURM_STEP_GPUS", 1, true},
      {"SLURM_STEP_GPUS", 65536, true},
      {"SLURM_STEP_GPUS", 65537, false},
      {"DT_PREEMPT_SIGNAL", 1 << 20, false},
  };
  for (const Case& c : cases) {
    FakeSpankHost host;
    host.env[c.name] = std::string(c.size, 'n');
    std::optional<std::string> out = "untouched";
    Status s = ReadEnv(host, c.name, &out);
    std::string cap = std::to_string(EnvValueCap(c.name));
    EXPECT_EQ(s.message(), c.whole ? ""
                                   : std::string(c.name) + " is longer than " +
                                         cap + " bytes (the cap)")
        << c.name << " " << c.size;
    EXPECT_EQ(out, c.whole
                       ? std::optional<std::string>(std::string(c.size, 'n'))
                       : std::nullopt)
        << c.size;
    std::string best_effort = "untouched";
    EXPECT_EQ(GetEnv(host, c.name, &best_effort), c.whole);
  }
}

TEST(SpankEnvTest, NodeListsGetTheLargerCap) {
  EXPECT_EQ(EnvValueCap("SLURM_STEP_NODELIST"), size_t{1} << 20);
  EXPECT_EQ(EnvValueCap("SLURM_NODELIST"), size_t{1} << 20);
  EXPECT_EQ(EnvValueCap("NODELIST"), size_t{1} << 20);
  EXPECT_EQ(EnvValueCap("SLURM_STEP_GPUS"), size_t{64} << 10);
  EXPECT_EQ(EnvValueCap("SLURM_NODELIST_X"), size_t{64} << 10);
}

TEST(SpankEnvTest, UnsetIsFalse) {
  FakeSpankHost host;
  std::string out = "untouched";
  EXPECT_FALSE(GetEnv(host, "DT_NOPE", &out));
  EXPECT_EQ(out, "untouched");
  std::optional<std::string> value = "untouched";
  EXPECT_TRUE(ReadEnv(host, "DT_NOPE", &value).ok());
  EXPECT_EQ(value, std::nullopt);
}

TEST(SpankEnvTest, OverwritesAnEntryInItsOwnBytesWhenTheValueFits) {
  char pid[] = "SLURM_TASK_PID=41234", pidx[] = "SLURM_TASK_PIDX=7",
       other[] = "PATH=/bin", eq[] = "SLURM_TASK_PID",
       prefix[] = "SLURM_TASK=1";
  char* env[] = {pidx, other, eq, prefix, pid, nullptr};
  const char* before = env[4];
  EXPECT_TRUE(OverwriteEnvEntry(env, "SLURM_TASK_PID", "41235"));
  EXPECT_STREQ(env[4], "SLURM_TASK_PID=41235");
  EXPECT_EQ(env[4], before);  // the same bytes, nothing reallocated
  EXPECT_TRUE(OverwriteEnvEntry(env, "SLURM_TASK_PID", "977"));  // shorter
  EXPECT_STREQ(env[4], "SLURM_TASK_PID=977");
  // Longer than what is there now, absent, or no array: nothing written.
  EXPECT_FALSE(OverwriteEnvEntry(env, "SLURM_TASK_PID", "1000000"));
  EXPECT_STREQ(env[4], "SLURM_TASK_PID=977");
  EXPECT_FALSE(OverwriteEnvEntry(env, "SLURM_PROCID", "0"));
  EXPECT_FALSE(OverwriteEnvEntry(env, "", "0"));
  EXPECT_FALSE(OverwriteEnvEntry(nullptr, "SLURM_TASK_PID", "1"));
  // Names that only start alike are other variables.
  EXPECT_STREQ(env[0], "SLURM_TASK_PIDX=7");
  EXPECT_STREQ(env[2], "SLURM_TASK_PID");
  EXPECT_STREQ(env[3], "SLURM_TASK=1");
}

}  // namespace
}  // namespace dist_train
