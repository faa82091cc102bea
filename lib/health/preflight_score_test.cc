// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/preflight_score.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

NodeProbe Node(const char* host, double cpu, double mem) {
  NodeProbe p;
  p.host = host;
  p.cpu_gflops = cpu;
  p.mem_gbps = mem;
  return p;
}

TEST(PreflightScoreTest, MedianIgnoresUnmeasured) {
  EXPECT_EQ(MedianOf({}), -1);
  EXPECT_EQ(MedianOf({-1, -1}), -1);
  EXPECT_EQ(MedianOf({3, 1, 2}), 2);
  EXPECT_EQ(MedianOf({4, 1, -1, 2, 3}), 2.5);
}

TEST(PreflightScoreTest, CleanNodesPass) {
  std::vector<NodeProbe> p = {Node("node1", 2.0, 10), Node("node2", 1.6, 9),
                              Node("node3", 2.2, 11), Node("node4", 1.1, 6)};
  PreflightScore s = ScoreProbes(p, ScoreOptions());
  EXPECT_TRUE(s.bad.empty());
  EXPECT_DOUBLE_EQ(s.median_cpu_gflops, 1.8);
  NetworkResult net{4, 61.4, 0.83, "tcp ring (4 ranks)"};
  EXPECT_EQ(PreflightReport(p, s, net),
            "dist-train: preflight: passed: 4 nodes, median CPU 1.80 GFLOP/s, "
            "memory 9.50 GB/s\n"
            "dist-train: preflight: network: 4 ranks (tcp ring (4 ranks)), "
            "all-reduce 8 B 61 us, 4 MiB 0.83 GB/s\n"
            "dist-train: preflight: no GPU on any node: GPU checks skipped\n");
}

TEST(PreflightScoreTest, NamesTheSlowNodeAndEveryReason) {
  std::vector<NodeProbe> p = {Node("node1", 2.0, 10), Node("node2", 2.1, 10),
                              Node("node3", 0.2, 4), Node("node4", 2.3, 10)};
  p[1].gpus_expected = 2;
  p[1].gpus_found = 1;
  p[3].nic = "ib0";
  p[3].nic_up = false;
  p[3].nic_state = "down";
  PreflightScore s = ScoreProbes(p, ScoreOptions());
  ASSERT_EQ(s.bad.size(), 3u);
  EXPECT_EQ(s.bad[0].host, "node2");
  EXPECT_EQ(s.bad[1].host, "node3");
  EXPECT_EQ(s.bad[1].reasons.size(), 2u);
  NetworkResult net;  // one rank: no network line
  EXPECT_EQ(PreflightReport(p, s, net),
            "dist-train: preflight: 3 of 4 nodes are bad or slow:\n"
            "  node2: 1 of 2 GPUs usable (CUDA_VISIBLE_DEVICES names 2)\n"
            "  node3: slow: CPU 0.20 GFLOP/s, 10% of the median 2.05\n"
            "  node3: slow: memory 4.00 GB/s, 40% of the median 10.00\n"
            "  node4: interface ib0 is down\n");
}

TEST(PreflightScoreTest, ThresholdIsTheSlowFraction) {
  std::vector<NodeProbe> p = {Node("a", 2.0, 10), Node("b", 2.0, 10),
                              Node("c", 1.1, 10)};
  EXPECT_TRUE(ScoreProbes(p, ScoreOptions()).bad.empty());
  ScoreOptions strict;
  strict.slow_fraction = 0.6;
  PreflightScore s = ScoreProbes(p, strict);
  ASSERT_EQ(s.bad.size(), 1u);
  EXPECT_EQ(s.bad[0].host, "c");
}

TEST(PreflightScoreTest, TheSitesMinimumNamesAStepThatIsSlowThroughout) {
  // Every node equally slow: the median sees nothing, the floor does.
  std::vector<NodeProbe> p = {Node("a", 1.0, 4), Node("b", 1.0, 9),
                              Node("c", 0.1, 4)};
  p[0].nic = "eth0";
  p[0].nic_up = true;
  p[0].nic_speed_mbps = 10000;
  p[1].nic = "ib0";
  p[1].nic_up = true;
  p[1].nic_speed_mbps = 100000;
  p[2].nic = "veth1";  // a speed the kernel does not report: not held
  p[2].nic_up = true;
  p[2].nic_speed_mbps = -1;
  EXPECT_EQ(ScoreProbes(p, ScoreOptions()).bad.size(), 1u);  // c
  ScoreOptions site;
  site.minimum = {2.0, 8, 25000};
  PreflightScore s = ScoreProbes(p, site);
  ASSERT_EQ(s.bad.size(), 3u);
  EXPECT_EQ(PreflightReport(p, s, NetworkResult()),
            "dist-train: preflight: 3 of 3 nodes are bad or slow:\n"
            "  a: slow: CPU 1.00 GFLOP/s, below the site's minimum 2.00 "
            "(preflight_min_cpu_gflops)\n"
            "  a: slow: memory 4.00 GB/s, below the site's minimum 8.00 "
            "(preflight_min_mem_gbps)\n"
            "  a: slow: link of eth0 10000 Mb/s, below the site's minimum "
            "25000 (preflight_min_link_mbps)\n"
            "  b: slow: CPU 1.00 GFLOP/s, below the site's minimum 2.00 "
            "(preflight_min_cpu_gflops)\n"
            "  c: slow: CPU 0.10 GFLOP/s, 10% of the median 1.00\n"
            "  c: slow: memory 4.00 GB/s, below the site's minimum 8.00 "
            "(preflight_min_mem_gbps)\n"
            "dist-train: preflight: no GPU on any node: GPU checks skipped\n");
  // At the floor is not below it.
  site.minimum = {1.0, 4, 10000};
  EXPECT_EQ(ScoreProbes(p, site).bad.size(), 1u);  // c, by the median
}

}  // namespace
}  // namespace dist_train
