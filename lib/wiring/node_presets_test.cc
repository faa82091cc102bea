// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/node_presets.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace dist_train {
namespace {

EnvPlan Plan(EnvAssignments set, std::vector<std::string> unset = {}) {
  EnvPlan p;
  p.set = std::move(set);
  p.unset = std::move(unset);
  return p;
}

std::vector<std::string> Names(const std::vector<Preset>& presets) {
  std::vector<std::string> names;
  for (const Preset& p : presets) names.push_back(p.name + "=" + p.value);
  return names;
}

TEST(NodePresetsTest, OnlyWhatEveryTaskSetsAlikeIsPreset) {
  std::vector<EnvPlan> plans = {
      Plan({{"MASTER_ADDR", "node1"}, {"RANK", "0"}, {"WORLD_SIZE", "8"}}),
      Plan({{"MASTER_ADDR", "node1"}, {"RANK", "1"}, {"WORLD_SIZE", "8"}}),
      Plan({{"RANK", "2"}, {"WORLD_SIZE", "8"}, {"MASTER_ADDR", "node1"}})};
  EXPECT_EQ(Names(CommonAssignments(plans)),
            (std::vector<std::string>{"MASTER_ADDR=node1", "WORLD_SIZE=8"}));
}

TEST(NodePresetsTest, AVariableOneTaskLacksOrUnsetsIsNotPreset) {
  std::vector<EnvPlan> plans = {
      Plan({{"A", "1"}, {"B", "2"}, {"C", "3"}}),
      Plan({{"A", "1"}, {"C", "3"}}),  // no B
      Plan({{"A", "1"}, {"B", "2"}, {"C", "3"}}, {"C"})};
  EXPECT_EQ(Names(CommonAssignments(plans)), (std::vector<std::string>{"A=1"}));
}

TEST(NodePresetsTest, OneTaskGetsNoPresets) {
  EXPECT_TRUE(CommonAssignments({Plan({{"A", "1"}})}).empty());
  EXPECT_TRUE(CommonAssignments({}).empty());
}

TEST(NodePresetsTest, UndoGivesTheInputsTheirValuesFromBefore) {
  std::vector<Preset> presets = {{"MASTER_ADDR", "node1", std::nullopt},
                                 {"OMP_NUM_THREADS", "4", std::string("16")},
                                 {"WORLD_SIZE", "8", std::nullopt}};
  EnvMap env = {{"MASTER_ADDR", "node1"},
                {"OMP_NUM_THREADS", "4"},
                {"WORLD_SIZE", "9"},  // changed since: not ours to undo
                {"OTHER", "x"}};
  UndoPresets(presets, &env);
  EXPECT_EQ(
      env,
      (EnvMap{{"OMP_NUM_THREADS", "16"}, {"WORLD_SIZE", "9"}, {"OTHER", "x"}}));
}

// The job's environment as the sink sees it, counting real sets.
struct Job {
  EnvMap env;
  int sets = 0;
};

class CountingSink : public EnvSink {
 public:
  explicit CountingSink(Job* job) : job_(job) {}
  Status Set(const std::string& name, const std::string& value) override {
    ++job_->sets;
    job_->env[name] = value;
    return Status::OK();
  }
  Status Unset(const std::string& name) override {
    job_->env.erase(name);
    return Status::OK();
  }

 private:
  Job* job_;
};

PresetSink::Lookup LookIn(const Job* job) {
  return [job](const std::string& name) -> std::optional<std::string> {
    auto it = job->env.find(name);
    if (it == job->env.end()) return std::nullopt;
    return it->second;
  };
}

// What a task ends with is what it would have had without presets, and
// only what differs costs a set.
TEST(NodePresetsTest, ATaskEndsWithItsOwnPlanWhateverWasPreset) {
  std::vector<Preset> presets = {{"MASTER_ADDR", "node1", std::nullopt},
                                 {"WORLD_SIZE", "8", std::nullopt},
                                 {"OMP_NUM_THREADS", "4", std::string("16")},
                                 {"NCCL_SOCKET_IFNAME", "eth0", std::nullopt}};
  Job job;
  job.env = {{"MASTER_ADDR", "node1"},
             {"WORLD_SIZE", "8"},
             {"OMP_NUM_THREADS", "4"},
             {"NCCL_SOCKET_IFNAME", "eth0"},
             {"SLURM_PROCID", "3"}};
  CountingSink out(&job);
  PresetSink sink(presets, LookIn(&job), out);
  // This task's plan: MASTER_ADDR as preset, WORLD_SIZE different, RANK
  // new, NCCL_SOCKET_IFNAME unset; OMP_NUM_THREADS not set at all.
  ASSERT_TRUE(sink.Unset("NCCL_SOCKET_IFNAME").ok());
  ASSERT_TRUE(sink.Set("MASTER_ADDR", "node1").ok());
  ASSERT_TRUE(sink.Set("WORLD_SIZE", "9").ok());
  ASSERT_TRUE(sink.Set("RANK", "3").ok());
  ASSERT_TRUE(sink.Finish().ok());
  EXPECT_EQ(job.env, (EnvMap{{"MASTER_ADDR", "node1"},
                             {"WORLD_SIZE", "9"},
                             {"RANK", "3"},
                             {"OMP_NUM_THREADS", "16"},
                             {"SLURM_PROCID", "3"}}));
  EXPECT_EQ(sink.skipped(), 1);
  EXPECT_EQ(job.sets, 3);  // WORLD_SIZE, RANK, OMP_NUM_THREADS back
}

TEST(NodePresetsTest, APresetTheTaskDidNotSetAndNobodyHadGoes) {
  std::vector<Preset> presets = {{"DT_NIC", "ib0", std::nullopt}};
  Job job;
  job.env = {{"DT_NIC", "ib0"}};
  CountingSink out(&job);
  PresetSink sink(presets, LookIn(&job), out);
  ASSERT_TRUE(sink.Finish().ok());
  EXPECT_TRUE(job.env.empty());
}

TEST(NodePresetsTest, AValueSlurmChangedSincePresettingIsLeftAlone) {
  std::vector<Preset> presets = {{"SLURM_X", "a", std::nullopt}};
  Job job;
  job.env = {{"SLURM_X", "b"}};
  CountingSink out(&job);
  PresetSink sink(presets, LookIn(&job), out);
  ASSERT_TRUE(sink.Finish().ok());
  EXPECT_EQ(job.env.at("SLURM_X"), "b");
  EXPECT_EQ(job.sets, 0);
}

}  // namespace
}  // namespace dist_train
