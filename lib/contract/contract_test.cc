// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/contract.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "binding/gpu_vendor.h"
#include "contract/port.h"
#include "testing/testing_contract.h"

namespace dist_train {
namespace {

using namespace testing_contract;  // NOLINT: test helpers

struct LayoutCase {
  const char* name;
  const char* nodelist;
  std::vector<uint32_t> tasks_per_node;
  const char* master;
};

TEST(ContractTest, TaskModeAgreesWithSlurmForEveryTaskOfEveryLayout) {
  const std::vector<LayoutCase> layouts = {
      {"one node", "gpu7", {4}, "gpu7"},
      {"2x2", "node[1-2]", {2, 2}, "node1"},
      {"4x3", "node[01-04]", {3, 3, 3, 3}, "node01"},
      {"uneven -N2 -n5", "node[3-4]", {3, 2}, "node3"},
      {"many nodes", "a[1-64]", std::vector<uint32_t>(64, 8), "a1"},
  };
  for (const LayoutCase& l : layouts) {
    uint32_t world = 0;
    for (uint32_t n : l.tasks_per_node) world += n;
    for (uint32_t rank = 0; rank < world; ++rank) {
      SlurmInputs in = TaskOf(l.nodelist, l.tasks_per_node, rank);
      EnvMap env = Plan(in);
      SCOPED_TRACE(std::string(l.name) + " rank " + std::to_string(rank));
      EXPECT_EQ(env["MASTER_ADDR"], l.master);
      EXPECT_EQ(env["MASTER_PORT"],
                std::to_string(DerivePort(1000, 0, 20000, 32767)));
      EXPECT_EQ(env["WORLD_SIZE"], std::to_string(world));
      EXPECT_EQ(env["RANK"], std::to_string(rank));
      EXPECT_EQ(env["LOCAL_RANK"], std::to_string(in.local_task_id));
      EXPECT_EQ(env["LOCAL_WORLD_SIZE"], std::to_string(in.local_tasks));
      EXPECT_EQ(env["NODE_RANK"], std::to_string(in.node_id));
      EXPECT_EQ(env["GROUP_RANK"], std::to_string(in.node_id));
      EXPECT_EQ(env["GROUP_WORLD_SIZE"],
                std::to_string(l.tasks_per_node.size()));
      EXPECT_EQ(env["ROLE_NAME"], "default");
      EXPECT_EQ(env["ROLE_RANK"], std::to_string(rank));
      EXPECT_EQ(env["ROLE_WORLD_SIZE"], std::to_string(world));
      EXPECT_EQ(env["OMP_NUM_THREADS"], "2");
      EXPECT_EQ(env.count("NNODES"), 0u);
      EXPECT_EQ(env.count("PET_NNODES"), 0u);
      EXPECT_EQ(env.count("DT_JOB_TOKEN"), 0u) << "the token is never re-set";
    }
  }
}

TEST(ContractTest, UnevenLayoutLocalWorldSizeDiffersPerNode) {
  EXPECT_EQ(Plan(TaskOf("node[1-2]", {3, 2}, 2))["LOCAL_WORLD_SIZE"], "3");
  EXPECT_EQ(Plan(TaskOf("node[1-2]", {3, 2}, 3))["LOCAL_WORLD_SIZE"], "2");
  EXPECT_EQ(Plan(TaskOf("node[1-2]", {3, 2}, 3))["LOCAL_RANK"], "0");
}

// The batch step as Slurm reports it: one task, S_JOB_NNODES 0.
SlurmInputs BatchOf(const std::string& nodelist, EnvMap extra = {}) {
  SlurmInputs in;
  in.job_id = 55;
  in.step_id = kBatchStepId;
  in.step_nnodes = 0;
  in.local_tasks = 1;
  in.total_tasks = 1;
  in.cpus_per_task = 8;
  in.env = {{"SLURM_JOB_NODELIST", nodelist}, {"SLURM_PROCID", "0"}};
  for (const auto& [k, v] : extra) in.env[k] = v;
  return in;
}

bool HasWarning(const EnvPlan& plan, const std::string& part) {
  return std::any_of(
      plan.warnings.begin(), plan.warnings.end(),
      [&part](const std::string& w) { return w.find(part) != w.npos; });
}

TEST(ContractTest, BatchStepOfAOneTaskJobIsRankZeroOfOne) {
  for (const EnvMap& extra : {EnvMap{}, EnvMap{{"SLURM_NTASKS", "1"}},
                              EnvMap{{"SLURM_NTASKS_PER_NODE", "1"}}}) {
    EnvPlan plan;
    EnvMap env = Plan(BatchOf("node2", extra), "on", PluginConfig(), &plan);
    EXPECT_EQ(env["MASTER_ADDR"], "node2");
    EXPECT_EQ(env["MASTER_PORT"],
              std::to_string(DerivePort(55, kBatchStepId, 20000, 32767)));
    EXPECT_EQ(env["WORLD_SIZE"], "1");
    EXPECT_EQ(env["RANK"], "0");
    EXPECT_EQ(env["GROUP_WORLD_SIZE"], "1");
    EXPECT_EQ(env["OMP_NUM_THREADS"], "8");
    EXPECT_FALSE(HasWarning(plan, "batch script"));
  }
}

// Forgetting srun must not train alone as rank 0 of 1 (issue #14): the
// batch step of a job with several tasks gets no worker variables, only
// where the workers meet, and one line that names srun.
TEST(ContractTest, BatchStepOfAManyTaskJobIsNoWorker) {
  struct Case {
    const char* nodelist;
    EnvMap extra;
    const char* tasks;
  } cases[] = {
      {"node[2-3]", {}, "2 tasks"},
      {"node2", {{"SLURM_NTASKS", "4"}}, "4 tasks"},
      {"node2", {{"SLURM_NTASKS_PER_NODE", "8"}}, "8 tasks"},
      {"node[2-3]", {{"SLURM_NTASKS_PER_NODE", "2"}}, "4 tasks"},
  };
  for (const Case& c : cases) {
    EnvPlan plan;
    EnvMap env =
        Plan(BatchOf(c.nodelist, c.extra), "on,verbose", PluginConfig(), &plan);
    SCOPED_TRACE(c.tasks);
    EXPECT_EQ(env["MASTER_ADDR"], "node2");
    EXPECT_EQ(env["MASTER_PORT"],
              std::to_string(DerivePort(55, kBatchStepId, 20000, 32767)));
    for (const char* worker :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK",
          "GROUP_RANK", "ROLE_RANK", "OMP_NUM_THREADS"}) {
      EXPECT_EQ(env.count(worker), 0u) << worker;
    }
    EXPECT_TRUE(HasWarning(
        plan, std::string("the batch script is not one of this job's ") +
                  c.tasks +
                  ": RANK, WORLD_SIZE and LOCAL_RANK are set in srun's tasks "
                  "only (srun python3 train.py, not python3 train.py)"));
    EXPECT_NE(plan.summary.find("(not a worker: " + std::string(c.tasks) +
                                ") master node2:"),
              std::string::npos)
        << plan.summary;
  }
}

TEST(ContractTest, NodeModeBatchStepIsALauncherOnlyInAOneNodeJob) {
  EnvMap one = Plan(BatchOf("node2", {{"SLURM_NTASKS", "4"}}), "mode=node");
  EXPECT_EQ(one["NNODES"], "1");
  EXPECT_EQ(one["NODE_RANK"], "0");
  EnvPlan plan;
  EnvMap two = Plan(BatchOf("node[2-3]"), "mode=node", PluginConfig(), &plan);
  EXPECT_EQ(two.count("NNODES"), 0u);
  EXPECT_EQ(two.count("NODE_RANK"), 0u);
  EXPECT_EQ(two.count("PET_NNODES"), 0u);
  EXPECT_EQ(two["MASTER_ADDR"], "node2");
  EXPECT_TRUE(HasWarning(plan, "not one of this job's 2 node launchers"));
}

TEST(ContractTest, BatchStepTaskCountsAreReadStrictly) {
  JobOptions opts;
  ASSERT_TRUE(ParseJobOptions("on", &opts).ok());
  EnvPlan plan;
  Status s = PlanTaskEnv(PluginConfig(), opts,
                         BatchOf("node2", {{"SLURM_NTASKS", "4x"}}), &plan);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("SLURM_NTASKS"), std::string::npos) << s.message();
}

TEST(ContractTest, ArrayTasksAndRequeuesRecomputeFromTheirOwnIds) {
  // Array tasks are separate jobs with consecutive ids: distinct ports. A
  // requeued job keeps its id but may get other nodes: the address follows
  // the node list given at this start.
  EXPECT_NE(Plan(TaskOf("n1", {1}, 0, 7001))["MASTER_PORT"],
            Plan(TaskOf("n1", {1}, 0, 7002))["MASTER_PORT"]);
  EXPECT_EQ(Plan(TaskOf("n[5-6]", {1, 1}, 1, 7001))["MASTER_ADDR"], "n5");
  EXPECT_EQ(Plan(TaskOf("n[8-9]", {1, 1}, 1, 7001))["MASTER_ADDR"], "n8");
}

TEST(ContractTest, ConcurrentStepsOfOneJobGetDifferentPorts) {
  EXPECT_NE(Plan(TaskOf("n1", {1}, 0, 9, 0))["MASTER_PORT"],
            Plan(TaskOf("n1", {1}, 0, 9, 1))["MASTER_PORT"]);
}

TEST(ContractTest, ReservedPortsWin) {
  SlurmInputs in = TaskOf("n[1-2]", {1, 1}, 0);
  in.env["SLURM_STEP_RESV_PORTS"] = "12010-12012";
  EXPECT_EQ(Plan(in)["MASTER_PORT"], "12010");
}

TEST(ContractTest, NodeModeGivesLauncherVariablesOnly) {
  SlurmInputs in = TaskOf("node[1-3]", {1, 1, 1}, 2);
  EnvMap env = Plan(in, "mode=node");
  EXPECT_EQ(env["MASTER_ADDR"], "node1");
  EXPECT_EQ(env["NNODES"], "3");
  EXPECT_EQ(env["NODE_RANK"], "2");
  EXPECT_EQ(env["NPROC_PER_NODE"], "1");
  EXPECT_EQ(env["PET_NNODES"], "3");
  EXPECT_EQ(env["PET_NODE_RANK"], "2");
  EXPECT_EQ(env["PET_NPROC_PER_NODE"], "1");
  EXPECT_EQ(env["PET_MASTER_ADDR"], "node1");
  EXPECT_EQ(env["PET_MASTER_PORT"], env["MASTER_PORT"]);
  for (const char* absent :
       {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
        "OMP_NUM_THREADS"}) {
    EXPECT_EQ(env.count(absent), 0u) << absent;
  }
}

TEST(ContractTest, NodeModeNprocFromOptionOrGpus) {
  SlurmInputs in = TaskOf("n1", {1}, 0);
  EXPECT_EQ(Plan(in, "mode=node,nproc=4")["NPROC_PER_NODE"], "4");
  in.env["CUDA_VISIBLE_DEVICES"] = "0,1,2";
  EXPECT_EQ(Plan(in, "mode=node")["NPROC_PER_NODE"], "3");
  in.env["SLURM_GPUS_ON_NODE"] = "8";
  EXPECT_EQ(Plan(in, "mode=node")["NPROC_PER_NODE"], "8");
}

TEST(ContractTest, NodeModeWarnsWithSeveralTasksPerNode) {
  EnvPlan plan;
  Plan(TaskOf("n1", {2}, 0), "mode=node", PluginConfig(), &plan);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0],
            "dist-train: mode=node expects one task per node, but this node "
            "runs 2 tasks of the step; each would start its own launcher");
}

TEST(ContractTest, AdminDefaultModeAndUserOverride) {
  PluginConfig cfg;
  cfg.default_mode = Mode::kNode;
  SlurmInputs in = TaskOf("n1", {1}, 0);
  EXPECT_EQ(Plan(in, "on", cfg).count("NNODES"), 1u);
  EXPECT_EQ(Plan(in, "mode=task", cfg).count("RANK"), 1u);
}

TEST(ContractTest, AddressPolicies) {
  SlurmInputs in = TaskOf("node[4-5]", {1, 1}, 1);
  PluginConfig cfg;
  cfg.master_addr_suffix = "-ib";
  EXPECT_EQ(Plan(in, "on", cfg)["MASTER_ADDR"], "node4-ib");
  cfg = PluginConfig();
  cfg.master_addr = AddrPolicy::kNodeAddr;
  in.first_node_addr = "10.1.2.4";
  EXPECT_EQ(Plan(in, "on", cfg)["MASTER_ADDR"], "10.1.2.4");
  in.first_node_addr.clear();
  EnvPlan plan;
  EXPECT_EQ(PlanTaskEnv(cfg, JobOptions(), in, &plan).message(),
            "master_addr=nodeaddr: no NodeAddr known for node4");
}

// A first host worked out before (by the plugin, once per node) is taken
// while the task's node list is that very list, and only then.
TEST(ContractTest, AKnownFirstHostIsUsedOnlyForItsOwnList) {
  SlurmInputs in = TaskOf("node[4-5]", {1, 1}, 1);
  in.first_host_of = "node[4-5]";
  in.first_host = "known";
  EXPECT_EQ(Plan(in)["MASTER_ADDR"], "known");
  in.first_host_of = "node[6-7]";
  EXPECT_EQ(Plan(in)["MASTER_ADDR"], "node4");
  in.first_host_of = "node[4-5]";
  in.env["SLURM_STEP_NODELIST"] = "node[2-5]";
  EXPECT_EQ(Plan(in)["MASTER_ADDR"], "node2");
}

TEST(ContractTest, OmpNumThreadsCanBeTurnedOffOrIsUnknown) {
  SlurmInputs in = TaskOf("n1", {1}, 0);
  PluginConfig cfg;
  cfg.omp_num_threads = false;
  EXPECT_EQ(Plan(in, "on", cfg).count("OMP_NUM_THREADS"), 0u);
  in.cpus_per_task = 0;
  EXPECT_EQ(Plan(in).count("OMP_NUM_THREADS"), 0u);
}

TEST(ContractTest, UserSetValuesWinAndAreReported) {
  SlurmInputs in = TaskOf("n[1-2]", {1, 1}, 1);
  in.env["MASTER_PORT"] = "4242";
  in.env["OMP_NUM_THREADS"] = "7";
  EnvPlan plan;
  EnvMap env = Plan(in, "verbose", PluginConfig(), &plan);
  EXPECT_EQ(env.count("MASTER_PORT"), 0u);
  EXPECT_EQ(env.count("OMP_NUM_THREADS"), 0u);
  EXPECT_EQ(plan.kept,
            (std::vector<std::string>{"MASTER_PORT", "OMP_NUM_THREADS"}));
  EXPECT_TRUE(plan.verbose);
  EXPECT_EQ(plan.summary,
            "dist-train: n1 step 1000.0 rank 1/2 local 0/1 node 1/2 master "
            "n1:4242 mode "
            "task; kept user-set MASTER_PORT=4242; kept user-set "
            "OMP_NUM_THREADS=7");
}

}  // namespace
}  // namespace dist_train
