// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/torchrun_vars.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TorchrunPlace Rank5Of8() {
  TorchrunPlace p;
  p.master_addr = "node1";
  p.master_port = 23456;
  p.nnodes = 2;
  p.node_rank = 1;
  p.world_size = 8;
  p.rank = 5;
  p.local_world_size = 4;
  p.local_rank = 1;
  p.nproc_per_node = 4;
  return p;
}

TEST(TorchrunVarsTest, WorkerVariablesInOrder) {
  const EnvAssignments want = {
      {"MASTER_ADDR", "node1"},  {"MASTER_PORT", "23456"},
      {"WORLD_SIZE", "8"},       {"RANK", "5"},
      {"LOCAL_RANK", "1"},       {"LOCAL_WORLD_SIZE", "4"},
      {"NODE_RANK", "1"},        {"GROUP_RANK", "1"},
      {"GROUP_WORLD_SIZE", "2"}, {"ROLE_NAME", "default"},
      {"ROLE_RANK", "5"},        {"ROLE_WORLD_SIZE", "8"}};
  EXPECT_EQ(TorchrunEnv(TorchrunWorkerVars(), Rank5Of8()), want);
}

TEST(TorchrunVarsTest, LauncherVariablesInOrder) {
  const EnvAssignments want = {{"MASTER_ADDR", "node1"},
                               {"MASTER_PORT", "23456"},
                               {"NNODES", "2"},
                               {"NODE_RANK", "1"},
                               {"NPROC_PER_NODE", "4"}};
  EXPECT_EQ(TorchrunEnv(TorchrunLauncherVars(), Rank5Of8()), want);
  EXPECT_EQ(TorchrunVarNames(TorchrunLauncherVars()),
            (std::vector<std::string>{"MASTER_ADDR", "MASTER_PORT", "NNODES",
                                      "NODE_RANK", "NPROC_PER_NODE"}));
}

}  // namespace
}  // namespace dist_train
