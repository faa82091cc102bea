// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// dt-topo's and the plugin's plan table and JSON: global and local rank,
// GPU index and model, why each NIC, on the recorded fixtures and (when
// present) the real topologies in ../shared/topologies.

#include "binding/plan_report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "binding/topology.h"
#include "testing/testing_topologies.h"

namespace dist_train {
namespace {

using testing_topologies::Fixture;

NodeModel Load(const std::string& path) {
  NodeModel m;
  Status s = LoadNodeModel(path, &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return m;
}

BindPlan Plan(const NodeModel& m, uint32_t ntasks, int64_t first_rank = -1) {
  BindRequest req;
  req.ntasks = ntasks;
  BindPlan plan;
  Status s = PlanBinding(m, req, &plan);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (first_rank >= 0) {
    for (RankPlan& r : plan.ranks) r.rank = first_rank + r.local_rank;
  }
  return plan;
}

// The table's line for local rank `local`, split on runs of 2+ spaces.
std::vector<std::string> Cells(const std::string& table, size_t line) {
  std::istringstream in(table);
  std::string text;
  for (size_t i = 0; i <= line; ++i) std::getline(in, text);
  std::vector<std::string> cells;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find("  ", pos);
    if (end == std::string::npos) end = text.size();
    cells.push_back(text.substr(pos, end - pos));
    pos = text.find_first_not_of(' ', end);
    if (pos == std::string::npos) break;
  }
  return cells;
}

TEST(PlanTableTest, ColumnsNameGlobalAndLocalRankGpuModelAndNicChoice) {
  NodeModel m = Load(Fixture("dgx-h100-8gpu.xml"));
  BindPlan plan = Plan(m, 8, 16);  // the third node of an 8-per-node job
  std::string table = PlanTable(m, plan);
  EXPECT_EQ(Cells(table, 0),
            (std::vector<std::string>{"rank", "local", "gpu", "model", "bus id",
                                      "nic", "nic choice", "cpus", "numa"}))
      << table;
  std::vector<std::string> row = Cells(table, 4);  // local rank 3
  ASSERT_EQ(row.size(), 9u) << table;
  EXPECT_EQ(row[0], "19");
  EXPECT_EQ(row[1], "3");
  EXPECT_EQ(row[2], "3");
  EXPECT_EQ(row[3], GpuModel(m, plan.ranks[3]));
  EXPECT_EQ(row[4], m.gpus[3].busid);
  EXPECT_NE(row[5].find("mlx5_5"), std::string::npos) << row[5];
  EXPECT_EQ(row[6], NicReason(m, plan, plan.ranks[3]));
}

TEST(PlanTableTest, AnUnknownGlobalRankIsADash) {
  NodeModel m = Load(Fixture("dgx-h100-8gpu.xml"));
  BindPlan plan = Plan(m, 2);
  EXPECT_EQ(Cells(PlanTable(m, plan), 1)[0], "-");
}

TEST(PlanTableTest, SeveralGpusAreAnIndexRangeWithTheirBusIds) {
  NodeModel m = Load(Fixture("two-gpus-per-switch.xml"));
  BindPlan plan = Plan(m, 2, 0);
  std::vector<std::string> row = Cells(PlanTable(m, plan), 1);
  ASSERT_EQ(row.size(), 9u);
  EXPECT_EQ(row[2], "0-1");
  EXPECT_EQ(row[4], m.gpus[0].busid + "," + m.gpus[1].busid);
  EXPECT_NE(row[5].find("; " + m.nics[plan.ranks[0].nics[1]].busid),
            std::string::npos)
      << row[5];
}

TEST(GpuModelTest, TheTopologysNameElsePciIds) {
  NodeModel m = Load(Fixture("dgx-h100-8gpu.xml"));
  BindPlan plan = Plan(m, 8);
  m.gpus[0].model = "";
  char ids[16];
  snprintf(ids, sizeof(ids), "%04x:%04x", m.gpus[0].vendor, m.gpus[0].device);
  EXPECT_EQ(GpuModel(m, plan.ranks[0]), ids);
  m.gpus[0].model = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(GpuModel(m, plan.ranks[0]), "NVIDIA H100 80GB HBM3");
  RankPlan cpu_only;
  EXPECT_EQ(GpuModel(m, cpu_only), "");
}

TEST(NicReasonTest, TierHopsFromTheGpuAndWhoSharesIt) {
  NodeModel m = Load(Fixture("dgx-h100-8gpu.xml"));
  BindPlan plan = Plan(m, 8);
  EXPECT_EQ(NicReason(m, plan, plan.ranks[2]),
            "rdma, same PCIe switch as GPU 2 (4 hops)");
  NodeModel shared = Load(Fixture("two-gpus-per-switch.xml"));
  ASSERT_GT(shared.gpus.size(), shared.nics.size());
  BindPlan p = Plan(shared, static_cast<uint32_t>(shared.gpus.size()));
  EXPECT_EQ(NicReason(shared, p, p.ranks[2]),
            "rdma, same PCIe switch as GPU 2 (4 hops), shared with local "
            "rank 3");
}

TEST(NicReasonTest, CpuOnlyRanksSayWhetherTheNicIsLocal) {
  NodeModel m = Load(Fixture("dgx-h100-8gpu.xml"));
  m.gpus.clear();
  BindPlan plan = Plan(m, 2);
  ASSERT_GE(plan.ranks[0].nic, 0);
  EXPECT_EQ(NicReason(m, plan, plan.ranks[0]), "rdma, local to its CPUs");
  m.nics.clear();
  BindPlan none = Plan(m, 2);
  EXPECT_EQ(NicReason(m, none, none.ranks[0]), "");
}

TEST(NicReasonTest, EthernetOnlyNodesSayThereIsNothingBetter) {
  NodeModel m = Load(Fixture("dgx-h100-8gpu.xml"));
  for (PciDevice& n : m.nics) n.tier = NicTier::kManagement;
  BindPlan plan = Plan(m, 8);
  EXPECT_EQ(NicReason(m, plan, plan.ranks[0])
                .rfind("ethernet (no RDMA or fabric NIC), ", 0),
            0u)
      << NicReason(m, plan, plan.ranks[0]);
}

TEST(PlanJsonTest, CarriesRankGpuIndexModelAndNicReason) {
  NodeModel m = Load(Fixture("dgx-h100-8gpu.xml"));
  BindPlan plan = Plan(m, 4, 4);
  std::string json = PlanJson(m, plan);
  EXPECT_NE(json.find("\"rank\": 5,\n    \"local_rank\": 1,"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"gpu_indexes\": [\n      2,\n      3\n    ]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"gpu_model\": \"" + GpuModel(m, plan.ranks[0]) + "\""),
            std::string::npos);
  EXPECT_NE(json.find("\"nic_reason\": \"rdma, "), std::string::npos);
  BindPlan unknown = Plan(m, 1);
  EXPECT_NE(PlanJson(m, unknown).find("\"rank\": null"), std::string::npos);
}

// OS device names come from the topology file too: bytes that are not
// UTF-8 must not make the JSON library throw (dt-topo --json would abort).
TEST(PlanJsonTest, NamesThatAreNotUtf8BecomeReplacementCharacters) {
  NodeModel m = Load(Fixture("dgx-h100-8gpu.xml"));
  BindPlan plan = Plan(m, 8);
  m.nics[plan.ranks[0].nic].names = {"ib\xff"};
  EXPECT_NE(PlanJson(m, plan).find("\"ib\xef\xbf\xbd\""), std::string::npos);
}

// A name from the topology file is input: it reaches logs only as
// printable ASCII, at most 64 characters.
TEST(GpuModelTest, ANameInTheTopologyIsPrintableAndBounded) {
  std::ifstream in(Fixture("dgx-h100-8gpu.xml"));
  std::stringstream xml;
  xml << in.rdbuf();
  std::string text = xml.str();
  // The first GPU (class 0302) is an empty element: give it a child.
  size_t at = text.find("pci_type=\"0302");
  ASSERT_NE(at, std::string::npos);
  size_t close = text.find("/>", at);
  ASSERT_NE(close, std::string::npos);
  std::string name = "H100\xe2\x84\xa2 " + std::string(100, 'x');
  text.replace(close, 2,
               "><info name=\"PCIDevice\" value=\"" + name + "\"/></object>");
  std::string path = ::testing::TempDir() + "/named-gpu.xml";
  std::ofstream(path) << text;
  NodeModel m = Load(path);
  ASSERT_FALSE(m.gpus.empty());
  std::string got = m.gpus[0].model;
  ASSERT_FALSE(got.empty()) << "the info was not read";
  EXPECT_EQ(got.size(), 64u);
  EXPECT_EQ(got.substr(0, 10), "H100??? xx");
}

// One EFA adapter for 8 T4s, in another package than most of them: the
// reason says so, and who shares it.
TEST(NicReasonTest, OneNicForEightGpusAcrossPackages) {
  std::string path =
      std::string(DT_SOURCE_DIR) +
      "/../shared/topologies/aws-g4dn-metal-8xT4-1xefa.hwloc.xml";
  if (!std::ifstream(path).good()) GTEST_SKIP() << path << " is absent";
  NodeModel m = Load(path);
  BindPlan plan = Plan(m, 8);
  EXPECT_EQ(NicReason(m, plan, plan.ranks[0]),
            "rdma, only the machine in common with GPU 0 (10 hops), shared "
            "with local ranks 1-7");
}

// The real topologies record the GPUs' models (NVML / RSMI).
TEST(GpuModelTest, RealTopologiesNameTheirGpus) {
  struct Case {
    const char* file;
    const char* model;
  } cases[] = {
      {"dell-xe8640-4xH100-ib.hwloc.xml", "NVIDIA H100 80GB HBM3"},
      {"aws-g4dn-metal-8xT4-1xefa.hwloc.xml", "Tesla T4"},
      {"nvidia-dgx2h-16xV100-stripped.hwloc.xml", "Tesla V100-SXM3-32GB-H"},
  };
  int seen = 0;
  for (const Case& c : cases) {
    std::string path =
        std::string(DT_SOURCE_DIR) + "/../shared/topologies/" + c.file;
    if (!std::ifstream(path).good()) continue;
    ++seen;
    NodeModel m = Load(path);
    ASSERT_FALSE(m.gpus.empty()) << c.file;
    for (const PciDevice& g : m.gpus) EXPECT_EQ(g.model, c.model) << c.file;
  }
  if (seen == 0) GTEST_SKIP() << "../shared/topologies is absent";
}

}  // namespace
}  // namespace dist_train

namespace dist_train {
namespace {

TEST(PlanReportTest, BindingNoteSaysWhyOrWarns) {
  BindPlan plan;
  EXPECT_EQ(BindingNote(Status::OK(), plan), "");
  plan.warnings = {"GPU 3 is in no rank's plan", "x"};
  EXPECT_EQ(BindingNote(Status::OK(), plan),
            "dist-train: binding: GPU 3 is in no rank's plan\n"
            "dist-train: binding: x");
  EXPECT_EQ(BindingNote(Status::NotFound("no hwloc"), plan),
            "dist-train: warning: no topology binding: no hwloc");
}

}  // namespace
}  // namespace dist_train
