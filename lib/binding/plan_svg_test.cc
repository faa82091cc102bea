// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/plan_svg.h"

#include <gtest/gtest.h>

#include "binding/topology.h"

namespace dist_train {
namespace {

NodeModel Fixture(const std::string& name) {
  NodeModel m;
  Status s =
      LoadNodeModel(std::string(DT_SOURCE_DIR) + "/tests/fixtures/" + name, &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return m;
}

BindPlan Plan(const NodeModel& m, uint32_t ntasks) {
  BindRequest req;
  req.ntasks = ntasks;
  BindPlan plan;
  EXPECT_TRUE(PlanBinding(m, req, &plan).ok());
  return plan;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(PlanSvgTest, OneBoxPerPackageNumaNodeGpuAndNic) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  std::string svg = PlanSvg(m, Plan(m, 8), "t");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(Count(svg, "class=\"package\""), m.packages.size());
  EXPECT_EQ(Count(svg, "class=\"numa\""), m.numa.size());
  EXPECT_EQ(Count(svg, "class=\"gpu\""), m.gpus.size());
  EXPECT_EQ(Count(svg, "class=\"nic\""), m.nics.size());
  EXPECT_EQ(Count(svg, "class=\"legend-row\""), 8u);
}

TEST(PlanSvgTest, GpusOutsideEveryPlanAreGreyAndSaySo) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  std::string svg = PlanSvg(m, Plan(m, 3), "t");  // GPUs 6-7 left out
  EXPECT_EQ(Count(svg, "in no plan"), 2u) << svg;
  EXPECT_NE(svg.find("data-gpu=\"6\"/>"), std::string::npos) << "no rank";
  EXPECT_NE(svg.find("data-gpu=\"5\" data-rank=\"2\""), std::string::npos);
}

TEST(PlanSvgTest, GlobalRanksWhenKnownLocalOtherwise) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, 8);
  EXPECT_NE(PlanSvg(m, plan, "t").find(">GPU 3  local rank 3<"),
            std::string::npos);
  for (RankPlan& r : plan.ranks) r.rank = 24 + r.local_rank;
  std::string svg = PlanSvg(m, plan, "t");
  EXPECT_NE(svg.find(">GPU 3  rank 27<"), std::string::npos);
  EXPECT_NE(svg.find(">rank 27 (local 3): GPU 3, NIC mlx5_5, CPUs "),
            std::string::npos);
}

TEST(PlanSvgTest, TextIsEscapedAndClippedToItsBox) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  m.gpus[0].model = "<b>&\"" + std::string(60, 'x');
  std::string svg = PlanSvg(m, Plan(m, 8), "a<b");
  EXPECT_NE(svg.find(">a&lt;b<"), std::string::npos);
  EXPECT_NE(svg.find(">&lt;b&gt;&amp;&quot;" + std::string(20, 'x') + "...<"),
            std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
}

TEST(PlanSvgTest, AMachineWithoutPackagesIsOneColumn) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  m.packages.clear();
  std::string svg = PlanSvg(m, Plan(m, 8), "t");
  EXPECT_EQ(Count(svg, "class=\"package\""), 1u);
  EXPECT_NE(svg.find(">Machine<"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"gpu\""), 8u);
}

}  // namespace
}  // namespace dist_train
