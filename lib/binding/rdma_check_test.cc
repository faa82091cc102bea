// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/rdma_check.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "binding/topology.h"
#include "testing/testing_files.h"
#include "testing/testing_topologies.h"

namespace dist_train {
namespace {

using testing_files::TempDir;

// A recorded /sys and /dev of one node, built per test.
class FakeNode {
 public:
  FakeNode() {
    roots_.sys = dir_.path() + "/sys";
    roots_.dev = dir_.path() + "/dev";
  }
  // An HCA with one port in `state` and verbs device uverbs`n` (its /dev
  // node too when `dev_node`).
  void AddHca(const std::string& hca, const std::string& state, int n,
              bool dev_node = true) {
    std::string d = roots_.sys + "/class/infiniband/" + hca;
    MakeDirs(d + "/ports/1");
    std::ofstream(d + "/ports/1/state") << state << "\n";
    if (n < 0) return;
    std::string uverbs = "uverbs" + std::to_string(n);
    MakeDirs(d + "/device/infiniband_verbs/" + uverbs);
    if (!dev_node) return;
    MakeDirs(roots_.dev + "/infiniband");
    std::ofstream(roots_.dev + "/infiniband/" + uverbs) << "";
  }
  const RdmaRoots& roots() const { return roots_; }

 private:
  static void MakeDirs(const std::string& path) {
    for (size_t i = 1; i <= path.size(); ++i)
      if (i == path.size() || path[i] == '/')
        mkdir(path.substr(0, i).c_str(), 0755);
  }
  TempDir dir_;
  RdmaRoots roots_;
};

TEST(RdmaUnusableReasonTest, EachCauseOfASocketFallbackIsNamed) {
  FakeNode node;
  node.AddHca("mlx5_0", "4: ACTIVE", 0);
  node.AddHca("mlx5_1", "1: DOWN", 1);
  node.AddHca("mlx5_2", "4: ACTIVE", -1);
  node.AddHca("mlx5_3", "4: ACTIVE", 3, /*dev_node=*/false);
  EXPECT_EQ(RdmaUnusableReason("mlx5_0", node.roots()), "");
  EXPECT_EQ(RdmaUnusableReason("mlx5_1", node.roots()),
            "no port is ACTIVE (port 1: 1: DOWN)");
  EXPECT_EQ(RdmaUnusableReason("mlx5_2", node.roots()),
            "it has no verbs device (is ib_uverbs loaded?)");
  EXPECT_EQ(RdmaUnusableReason("mlx5_3", node.roots()),
            "/dev/infiniband/uverbs3 is absent (a container started "
            "without /dev/infiniband?)");
  EXPECT_EQ(RdmaUnusableReason("mlx5_9", node.roots()),
            "it is not in /sys/class/infiniband (its driver is not loaded, "
            "or this task cannot see it)");
}

BindPlan DgxPlan(NodeModel* m, uint32_t ntasks) {
  EXPECT_TRUE(
      LoadNodeModel(testing_topologies::Fixture("dgx-h100-8gpu.xml"), m).ok());
  BindRequest req;
  req.ntasks = ntasks;
  BindPlan plan;
  EXPECT_TRUE(PlanBinding(*m, req, &plan).ok());
  return plan;
}

TEST(RdmaFallbackNoteTest, NamesEachUnusableHcaWithItsRanksOnce) {
  NodeModel m;
  BindPlan plan = DgxPlan(&m, 4);  // rank 0: mlx5_0,3,4,5; rank 1: 6,9,10,11
  FakeNode node;
  for (const char* hca :
       {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"})
    node.AddHca(hca, "4: ACTIVE", hca[5] - '0');
  node.AddHca("mlx5_5", "1: DOWN", 5);
  EXPECT_EQ(RdmaFallbackNote(m, plan, node.roots()),
            "dist-train: warning: NCCL will fall back to TCP sockets, several "
            "times slower, on bound RDMA NICs it cannot use: mlx5_5 (local "
            "ranks 1): no port is ACTIVE (port 1: 1: DOWN)");
  node.AddHca("mlx5_5", "4: ACTIVE", 5);
  EXPECT_EQ(RdmaFallbackNote(m, plan, node.roots()), "");
}

TEST(RdmaFallbackNoteTest, SilentWithoutGpus) {
  NodeModel m;
  BindPlan plan = DgxPlan(&m, 8);
  plan.step_gpus.clear();  // a CPU step: NCCL is not what moves its data
  FakeNode node;           // and no HCA is visible at all
  EXPECT_EQ(RdmaFallbackNote(m, plan, node.roots()), "");
}

}  // namespace
}  // namespace dist_train
