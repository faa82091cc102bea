// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/node_set.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

std::string Merged(const std::string& existing,
                   const std::vector<std::string>& add) {
  std::string out = "unset";
  Status s = MergeNodeLists(existing, add, "ExcNodeList", &out);
  return s.ok() ? out : "error: " + s.message();
}

TEST(NodeSetTest, NothingToMerge) { EXPECT_EQ(Merged("", {}), ""); }

TEST(NodeSetTest, FirstExclusionIsTheHost) {
  EXPECT_EQ(Merged("", {"node3"}), "node3");
}

TEST(NodeSetTest, AddsToWhatTheJobAlreadyExcludedAsOneRangedList) {
  EXPECT_EQ(Merged("node[1-2]", {"node3"}), "node[1-3]");
  EXPECT_EQ(Merged("node7,gpu01", {"node8", "gpu02"}), "gpu[01-02],node[7-8]");
}

TEST(NodeSetTest, EachHostOnce) {
  EXPECT_EQ(Merged("node[1-3]", {"node2", "node2", "node4"}), "node[1-4]");
  EXPECT_EQ(Merged("", {"node3", "node3"}), "node3");
}

TEST(NodeSetTest, RefusesAListWhereOneHostIsExpected) {
  EXPECT_EQ(Merged("", {"node[1-2]"}),
            "error: ExcNodeList: 'node[1-2]' is not one host name");
  EXPECT_EQ(Merged("", {""}),
            "error: ExcNodeList='' is not a valid Slurm node list");
}

TEST(NodeSetTest, RefusesAMalformedExistingList) {
  EXPECT_EQ(Merged("node[3-1]", {"node4"}),
            "error: ExcNodeList='node[3-1]' is not a valid Slurm node list");
}

}  // namespace
}  // namespace dist_train
