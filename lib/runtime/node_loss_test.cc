// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/node_loss.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

// node1: ranks 0-1, node2: 2-3, node3: 4-5 (or the first `nodes` of them).
StepLayout Layout(int nodes = 3) {
  StepLayout l;
  for (int n = 1; n <= nodes; ++n) {
    l.hosts.push_back("node" + std::to_string(n));
    l.tasks.push_back(2);
  }
  return l;
}

TEST(NodeLossTest, TheLostRanksNodeIsExcluded) {
  NodeLossVerdict v = JudgeNodeLoss(Layout(), {3, 2});
  EXPECT_TRUE(v.requeue);
  EXPECT_EQ(v.hosts, (std::vector<std::string>{"node2"}));
  EXPECT_EQ(LostNodesText(Layout(), {3, 2}), "node2 (ranks 2, 3)");
}

TEST(NodeLossTest, SeveralLostNodesAreAllExcludedInNodeOrder) {
  StepLayout l = Layout(4);
  NodeLossVerdict v = JudgeNodeLoss(l, {7, 2});
  EXPECT_TRUE(v.requeue);
  EXPECT_EQ(v.hosts, (std::vector<std::string>{"node2", "node4"}));
  EXPECT_EQ(LostNodesText(l, {7, 2, 7}), "node2 (rank 2), node4 (rank 7)");
}

TEST(NodeLossTest, LosingEveryOtherNodeBlamesRankZerosOwnNetwork) {
  NodeLossVerdict v = JudgeNodeLoss(Layout(), {2, 4});
  EXPECT_FALSE(v.requeue);
  EXPECT_EQ(v.why_not,
            "every other node stopped answering rank 0 on node1: its own "
            "network is the likelier fault");
}

TEST(NodeLossTest, WithTwoNodesTheOtherOneIsExcluded) {
  NodeLossVerdict v = JudgeNodeLoss(Layout(2), {2});
  EXPECT_TRUE(v.requeue);
  EXPECT_EQ(v.hosts, (std::vector<std::string>{"node2"}));
}

TEST(NodeLossTest, RankZerosOwnNodeAndUnknownRanksExcludeNothing) {
  NodeLossVerdict v = JudgeNodeLoss(Layout(), {1, 99, -1});
  EXPECT_FALSE(v.requeue);
  EXPECT_TRUE(v.hosts.empty());
  EXPECT_EQ(v.why_not, "no node but rank 0's own lost its ranks");
}

// The layout is the environment's guess (blocks); the ranks' addresses say
// which ranks share a machine. Where they disagree nothing is excluded.
TEST(NodeLossTest, TheLayoutMustGroupRanksAsTheirAddressesDo) {
  const std::vector<std::string> blocks = {"10.0.0.1", "10.0.0.1", "10.0.0.2",
                                           "10.0.0.2", "10.0.0.3", "10.0.0.3"};
  EXPECT_TRUE(CheckLayoutAgainstAddresses(Layout(), blocks).ok());
  const std::vector<std::string> cyclic = {"10.0.0.1", "10.0.0.2", "10.0.0.3",
                                           "10.0.0.1", "10.0.0.2", "10.0.0.3"};
  EXPECT_EQ(CheckLayoutAgainstAddresses(Layout(), cyclic).message(),
            "rank 1 would be on node1 with rank 0, but its address is "
            "10.0.0.2, not 10.0.0.1: the ranks are not laid out in blocks");
  // One rank per node by the layout, two ranks per machine by address.
  StepLayout per_task;
  per_task.hosts = {"node1", "node2", "node3", "node4", "node5", "node6"};
  per_task.tasks.assign(6, 1);
  EXPECT_EQ(CheckLayoutAgainstAddresses(per_task, blocks).message(),
            "rank 1 would be on node2, but its address 10.0.0.1 is rank 0's, "
            "on node1: the ranks are not laid out in blocks");
  EXPECT_EQ(CheckLayoutAgainstAddresses(Layout(2), blocks).message(),
            "the step's layout has 4 ranks, the job 6");
}

TEST(NodeLossTest, ThePolicyIsFailOrRequeueAndNothingElse) {
  bool requeue = true;
  ASSERT_TRUE(ReadNodeLossPolicy({}, &requeue).ok());
  EXPECT_FALSE(requeue);
  ASSERT_TRUE(ReadNodeLossPolicy({{"DT_NODE_LOSS", "requeue"}}, &requeue).ok());
  EXPECT_TRUE(requeue);
  ASSERT_TRUE(ReadNodeLossPolicy({{"DT_NODE_LOSS", "fail"}}, &requeue).ok());
  EXPECT_FALSE(requeue);
  requeue = true;
  EXPECT_EQ(
      ReadNodeLossPolicy({{"DT_NODE_LOSS", "Requeue\n"}}, &requeue).message(),
      "DT_NODE_LOSS='Requeue\\x0a' is not fail or requeue");
  EXPECT_TRUE(requeue) << "untouched";
}

}  // namespace
}  // namespace dist_train
