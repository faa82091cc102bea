// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The contract across steps of one job (what a batch step exported, the
// user changed or off removes), its record, bad inputs, binding variables.

#include "contract/contract.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "binding/binding_env.h"
#include "binding/gpu_vendor.h"
#include "binding/topology.h"
#include "contract/port.h"
#include "testing/testing_contract.h"
#include "testing/testing_topologies.h"

namespace dist_train {
namespace {

using namespace testing_contract;  // NOLINT: test helpers

EnvMap InheritFromBatch(const EnvMap& batch_env, SlurmInputs inner) {
  for (const auto& [k, v] : batch_env) inner.env.emplace(k, v);
  return inner.env;
}

TEST(ContractTest, InnerStepRecomputesWhatTheBatchStepExported) {
  SlurmInputs batch;
  batch.job_id = 77;
  batch.step_id = kBatchStepId;
  batch.env = {{"SLURM_JOB_NODELIST", "n[1-2]"}};
  EnvMap exported = Plan(batch);
  ASSERT_EQ(exported.count("RANK"), 0u);
  ASSERT_EQ(exported["MASTER_PORT"],
            std::to_string(DerivePort(77, kBatchStepId, 20000, 32767)));

  SlurmInputs inner = TaskOf("n[1-2]", {2, 2}, 3, 77, 0);
  inner.env = InheritFromBatch(exported, inner);
  EnvMap env = Plan(inner);
  EXPECT_EQ(env["RANK"], "3");
  EXPECT_EQ(env["WORLD_SIZE"], "4");
  EXPECT_EQ(env["MASTER_PORT"],
            std::to_string(DerivePort(77, 0, 20000, 32767)));
}

TEST(ContractTest, UserChangeAfterTheBatchStepExportedIsKept) {
  SlurmInputs batch;
  batch.job_id = 77;
  batch.step_id = kBatchStepId;
  batch.env = {{"SLURM_JOB_NODELIST", "n[1-2]"}};
  EnvMap exported = Plan(batch);
  exported["MASTER_PORT"] =
      "29500";  // `export MASTER_PORT=29500` in the script
  SlurmInputs inner = TaskOf("n[1-2]", {1, 1}, 1, 77, 0);
  inner.env = InheritFromBatch(exported, inner);
  EnvPlan plan;
  EnvMap env = Plan(inner, "on", PluginConfig(), &plan);
  EXPECT_EQ(env.count("MASTER_PORT"), 0u);
  EXPECT_EQ(plan.kept, std::vector<std::string>{"MASTER_PORT"});
  EXPECT_EQ(env["RANK"], "1");
}

TEST(ContractTest, NodeModeStepUnsetsStaleTaskVariables) {
  SlurmInputs batch;
  batch.step_id = kBatchStepId;
  batch.cpus_per_task = 4;
  batch.env = {{"SLURM_JOB_NODELIST", "n1"}};
  EnvMap exported = Plan(batch);
  SlurmInputs inner = TaskOf("n1", {1}, 0);
  inner.env = InheritFromBatch(exported, inner);
  EnvPlan plan;
  Plan(inner, "mode=node", PluginConfig(), &plan);
  for (const char* stale :
       {"RANK", "WORLD_SIZE", "LOCAL_RANK", "ROLE_NAME", "OMP_NUM_THREADS"}) {
    EXPECT_NE(std::find(plan.unset.begin(), plan.unset.end(), stale),
              plan.unset.end())
        << stale;
  }
}

TEST(ContractTest, OffRemovesOnlyInheritedValuesAndSetsNothing) {
  SlurmInputs batch;
  batch.step_id = kBatchStepId;
  batch.env = {{"SLURM_JOB_NODELIST", "n1"}};
  EnvMap exported = Plan(batch);
  exported["WORLD_SIZE"] = "99";  // user's own
  SlurmInputs inner = TaskOf("n1", {1}, 0);
  inner.env = InheritFromBatch(exported, inner);
  EnvPlan plan;
  EnvMap env = Plan(inner, "off", PluginConfig(), &plan);
  EXPECT_TRUE(env.empty());
  EXPECT_NE(std::find(plan.unset.begin(), plan.unset.end(), "RANK"),
            plan.unset.end());
  EXPECT_NE(std::find(plan.unset.begin(), plan.unset.end(), "DT_EXPORTED"),
            plan.unset.end());
  EXPECT_EQ(std::find(plan.unset.begin(), plan.unset.end(), "WORLD_SIZE"),
            plan.unset.end());
}

TEST(ContractTest, ExportRecordDescribesExactlyWhatWasSet) {
  EnvPlan plan;
  EnvMap env = Plan(TaskOf("n1", {1}, 0), "on", PluginConfig(), &plan);
  ExportRecord record;
  ASSERT_TRUE(ParseExportRecord(env["DT_EXPORTED"], &record).ok());
  EXPECT_EQ(record.size(), plan.set.size() - 1);
  for (const auto& [name, value] : plan.set) {
    if (name != "DT_EXPORTED") {
      EXPECT_TRUE(WasExportedUnchanged(record, name, value)) << name;
    }
  }
}

struct BadInput {
  const char* var;
  const char* value;  // nullptr: remove it
  const char* message;
};

TEST(ContractTest, BadEnvironmentValuesAreNamed) {
  const std::vector<BadInput> cases = {
      {"SLURM_STEP_NODELIST", nullptr, "SLURM_STEP_NODELIST is not set"},
      {"SLURM_STEP_NODELIST", "n[1-",
       "SLURM_STEP_NODELIST='n[1-' is not a valid Slurm node list"},
      {"SLURM_PROCID", "x1", "SLURM_PROCID='x1' is not a non-negative integer"},
      {"SLURM_PROCID", "9", "SLURM_PROCID=9 is not below tasks=2"},
      {"SLURM_NODEID", "-1", "SLURM_NODEID='-1' is not a non-negative integer"},
      {"SLURM_LOCALID", "5", "SLURM_LOCALID=5 is not below local tasks=1"},
      {"SLURM_STEP_RESV_PORTS", "none",
       "SLURM_STEP_RESV_PORTS='none' does not start with a port number"},
      {"DT_EXPORTED", "RANK",
       "DT_EXPORTED: malformed entry 'RANK' (expected NAME:16 hex digits)"},
      {"DT_JOB_TOKEN", "short",
       "DT_JOB_TOKEN must be 64 lowercase hex digits (got 5 characters)"},
  };
  for (const BadInput& c : cases) {
    SlurmInputs in = TaskOf("n[1-2]", {1, 1}, 1);
    if (c.value) {
      in.env[c.var] = c.value;
    } else {
      in.env.erase(c.var);
    }
    EnvPlan plan;
    plan.summary = "untouched";
    Status s = PlanTaskEnv(PluginConfig(), JobOptions(), in, &plan);
    EXPECT_EQ(s.message(), c.message) << c.var;
    EXPECT_EQ(plan.summary, "untouched");
  }
}

TEST(ContractTest, MissingTokenIsAWarningNotAnError) {
  SlurmInputs in = TaskOf("n1", {1}, 0);
  in.env.erase("DT_JOB_TOKEN");
  EnvPlan plan;
  Plan(in, "on", PluginConfig(), &plan);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0],
            "dist-train: DT_JOB_TOKEN is not set (job submitted with "
            "--export=NONE?); rendezvous will be unauthenticated");
}

TEST(ContractTest, BindingVariablesJoinTaskModeAndUserValuesStillWin) {
  SlurmInputs in = TaskOf("n1", {2}, 1);
  in.binding = {{"OMP_NUM_THREADS", "6"},
                {"DT_CPUS", "6-11"},
                {"UCX_NET_DEVICES", "mlx5_1:1"}};
  in.env["UCX_NET_DEVICES"] = "mlx5_0:1";  // the user's choice
  EnvPlan plan;
  EnvMap env = Plan(in, "on", PluginConfig(), &plan);
  EXPECT_EQ(env["OMP_NUM_THREADS"], "6") << "the CPU share, not CPUs per task";
  EXPECT_EQ(env["DT_CPUS"], "6-11");
  EXPECT_EQ(env.count("UCX_NET_DEVICES"), 0u);
  EXPECT_EQ(plan.kept, std::vector<std::string>{"UCX_NET_DEVICES"});
  EXPECT_EQ(Plan(in, "mode=node").count("DT_CPUS"), 0u)
      << "launchers are not bound";
}

TEST(ContractTest, SlurmsPerTaskGpuListIsReplacedNotKept) {
  SlurmInputs in = TaskOf("n1", {4}, 2);
  in.env["SLURM_STEP_GPUS"] = "0,1,2,3";
  in.env["CUDA_VISIBLE_DEVICES"] = "2";  // --gpu-bind / --gpus-per-task
  in.binding = {{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}, {"DT_LOCAL_GPU", "2"}};
  EnvPlan plan;
  EnvMap env = Plan(in, "on", PluginConfig(), &plan);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1,2,3");
  EXPECT_TRUE(plan.kept.empty());
  in.env.erase("SLURM_STEP_GPUS");  // without Slurm GPUs it is the user's
  env = Plan(in, "on", PluginConfig(), &plan);
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
}

TEST(ContractTest, JobDeadlineIsExportedInBothModesWhenKnown) {
  SlurmInputs in = TaskOf("n1", {1}, 0);
  EXPECT_EQ(Plan(in).count("DT_JOB_DEADLINE"), 0u) << "no limit known";
  in.job_end_time = 1800000000;
  EXPECT_EQ(Plan(in)["DT_JOB_DEADLINE"], "1800000000");
  EXPECT_EQ(Plan(in, "mode=node")["DT_JOB_DEADLINE"], "1800000000");
}

TEST(ContractTest, InputNamesCoverEveryContractVariable) {
  const auto& inputs = InputEnvNames();
  for (const std::string& name : ContractVarNames()) {
    EXPECT_NE(std::find(inputs.begin(), inputs.end(), name), inputs.end())
        << name;
  }
}

TEST(ContractTest, InputNamesCoverEveryVendorsVisibleDevices) {
  const auto& inputs = InputEnvNames();
  for (const std::string& name : AllVisibleDevicesVars()) {
    EXPECT_NE(std::find(inputs.begin(), inputs.end(), name), inputs.end())
        << name << " (binding/gpu_vendor.cc) is not recomputed when inherited";
  }
}

// A nested step inherits its task's binding variables; each one the binder
// can set must be recognised so that it is recomputed, not kept as the
// user's.
TEST(ContractTest, InputNamesCoverEveryBindingVariable) {
  NodeModel m;
  ASSERT_TRUE(
      LoadNodeModel(testing_topologies::Fixture("dgx-h100-8gpu.xml"), &m).ok());
  BindRequest req;
  req.ntasks = 4;  // several GPUs and NICs per rank: DT_GPUS, DT_NICS
  BindPlan plan;
  ASSERT_TRUE(PlanBinding(m, req, &plan).ok());
  BindingEnvInputs in;
  in.nccl_ib_hca = true;
  in.socket_interfaces = {"ibp77s0"};
  EnvAssignments env = BindingEnv(m, plan, plan.ranks[1], in);
  ASSERT_GE(env.size(), 14u);
  const auto& inputs = InputEnvNames();
  for (const auto& [name, value] : env) {
    EXPECT_NE(std::find(inputs.begin(), inputs.end(), name), inputs.end())
        << name << " is not recomputed when inherited";
  }
}

}  // namespace
}  // namespace dist_train
