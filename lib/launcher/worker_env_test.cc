// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/worker_env.h"

#include <gtest/gtest.h>

#include "contract/torchrun_vars.h"

namespace dist_train {
namespace {

TEST(WorkerEnvTest, RanksFollowNodeRankAndLocalRank) {
  NodeContract node;
  ASSERT_TRUE(NodeContractFromEnv({{"MASTER_ADDR", "n1"},
                                   {"MASTER_PORT", "23456"},
                                   {"NNODES", "3"},
                                   {"NODE_RANK", "2"},
                                   {"NPROC_PER_NODE", "4"}},
                                  0, &node)
                  .ok());
  EnvMap w;
  for (const auto& [k, v] : WorkerEnv(node, 1, 0)) w[k] = v;
  EXPECT_EQ(w["RANK"], "9");
  EXPECT_EQ(w["WORLD_SIZE"], "12");
  EXPECT_EQ(w["LOCAL_RANK"], "1");
  EXPECT_EQ(w["LOCAL_WORLD_SIZE"], "4");
  EXPECT_EQ(w["GROUP_RANK"], "2");
  EXPECT_EQ(w["GROUP_WORLD_SIZE"], "3");
  EXPECT_EQ(w["ROLE_RANK"], "9");
  EXPECT_EQ(w["MASTER_ADDR"], "n1");
}

TEST(WorkerEnvTest, TorchrunWorkerVariablesThenRestartCount) {
  NodeContract node;
  node.master_addr = "n1";
  node.master_port = 23456;
  node.nnodes = 2;
  node.node_rank = 1;
  node.nproc = 2;
  std::vector<std::string> want = TorchrunVarNames(TorchrunWorkerVars());
  want.emplace_back("DT_RESTART_COUNT");
  std::vector<std::string> names;
  EnvAssignments env = WorkerEnv(node, 0, 3);
  for (const auto& [name, value] : env) names.push_back(name);
  EXPECT_EQ(names, want) << "the plugin's task mode sets the same list";
  EXPECT_EQ(env.back().second, "3");
}

TEST(WorkerEnvTest, PetFormsAndOverride) {
  NodeContract node;
  ASSERT_TRUE(NodeContractFromEnv({{"PET_MASTER_ADDR", "m"},
                                   {"PET_MASTER_PORT", "1234"},
                                   {"PET_NNODES", "2"},
                                   {"PET_NODE_RANK", "1"},
                                   {"PET_NPROC_PER_NODE", "8"}},
                                  3, &node)
                  .ok());
  EXPECT_EQ(node.nproc, 3);
  EXPECT_EQ(node.node_rank, 1);
}

TEST(WorkerEnvTest, ErrorsNameTheVariable) {
  NodeContract node;
  EXPECT_EQ(NodeContractFromEnv({}, 0, &node).message(),
            "MASTER_ADDR is not set: run dt-run under srun "
            "--dist-train=mode=node, or use --standalone");
  EXPECT_EQ(NodeContractFromEnv({{"MASTER_ADDR", "m"},
                                 {"MASTER_PORT", "1"},
                                 {"NNODES", "2"},
                                 {"NODE_RANK", "2"}},
                                0, &node)
                .message(),
            "NODE_RANK=2 is not below NNODES=2");
  EXPECT_EQ(NodeContractFromEnv({{"MASTER_ADDR", "m"}, {"MASTER_PORT", "x"}}, 0,
                                &node)
                .message(),
            "MASTER_PORT='x' is not an integer from 1 to 65535");
}

}  // namespace
}  // namespace dist_train
