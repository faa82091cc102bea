// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/env_sink.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace dist_train {
namespace {

// Records every call; fails the one named `fail_on`.
class LogSink : public EnvSink {
 public:
  Status Set(const std::string& name, const std::string& value) override {
    log.push_back("set " + name + "=" + value);
    if (name == fail_on) return Status::IOError("set " + name + ": full");
    return Status::OK();
  }
  Status Unset(const std::string& name) override {
    log.push_back("unset " + name);
    return Status::OK();
  }
  std::vector<std::string> log;
  std::string fail_on;
};

TEST(ApplyEnvPlanTest, UnsetsFirstThenSetsInOrder) {
  EnvPlan plan;
  plan.set = {{"RANK", "1"}, {"WORLD_SIZE", "4"}};
  plan.unset = {"DT_GPU", "DT_NIC"};
  LogSink sink;
  ASSERT_TRUE(ApplyEnvPlan(plan, sink).ok());
  EXPECT_EQ(sink.log,
            (std::vector<std::string>{"unset DT_GPU", "unset DT_NIC",
                                      "set RANK=1", "set WORLD_SIZE=4"}));
}

TEST(ApplyEnvPlanTest, StopsAtTheFirstErrorNamingTheVariable) {
  EnvPlan plan;
  plan.set = {{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}};
  LogSink sink;
  sink.fail_on = "WORLD_SIZE";
  Status s = ApplyEnvPlan(plan, sink);
  EXPECT_EQ(s.message(), "set WORLD_SIZE: full");
  EXPECT_EQ(sink.log.size(), 2u);
}

TEST(ApplyEnvPlanTest, TheTaskPidGoesThroughSetByDefault) {
  LogSink sink;
  ASSERT_TRUE(sink.SetTaskPid("123").ok());
  EXPECT_EQ(sink.log, std::vector<std::string>{"set SLURM_TASK_PID=123"});
}

TEST(ProcessEnvSinkTest, SetsAndUnsetsThisProcesssEnvironment) {
  ProcessEnvSink sink;
  const char* name = "DT_TEST_ENV_SINK";
  ASSERT_TRUE(sink.Set(name, "a b").ok());
  ASSERT_NE(getenv(name), nullptr);
  EXPECT_STREQ(getenv(name), "a b");
  ASSERT_TRUE(sink.Set(name, "c").ok());
  EXPECT_STREQ(getenv(name), "c");
  ASSERT_TRUE(sink.Unset(name).ok());
  EXPECT_EQ(getenv(name), nullptr);
  EXPECT_TRUE(sink.Unset(name).ok());  // not set: no error
}

TEST(ProcessEnvSinkTest, RefusesANameSetenvRefusesNamingIt) {
  ProcessEnvSink sink;
  EXPECT_EQ(sink.Set("A=B", "1").message(), "set A=B: Invalid argument");
  EXPECT_EQ(sink.Set("", "1").message(), "set : Invalid argument");
}

}  // namespace
}  // namespace dist_train
