// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/binding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "binding/plan_report.h"
#include "binding/topology.h"
#include "testing/testing_topologies.h"

namespace dist_train {
namespace {

using testing_topologies::Fixture;
using testing_topologies::RealTopologies;

NodeModel Load(const std::string& name) {
  NodeModel m;
  Status s = LoadNodeModel(Fixture(name), &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return m;
}

BindPlan Plan(const NodeModel& m, BindRequest req) {
  BindPlan plan;
  Status s = PlanBinding(m, req, &plan);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return plan;
}

BindRequest Tasks(uint32_t n) {
  BindRequest r;
  r.ntasks = n;
  return r;
}

std::string NicName(const NodeModel& m, const RankPlan& r) {
  if (r.nic < 0) return "-";
  for (const std::string& n : m.nics[r.nic].names) {
    if (n.rfind("mlx5_", 0) == 0 || n.rfind("hsi", 0) == 0 ||
        n.rfind("eth", 0) == 0 || n.rfind("eno", 0) == 0) {
      return n;
    }
  }
  return m.nics[r.nic].names.empty() ? m.nics[r.nic].busid
                                     : m.nics[r.nic].names[0];
}

bool Subset(const std::vector<int>& a, const std::vector<int>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

void ExpectDisjoint(const BindPlan& plan) {
  std::set<int> seen;
  for (const RankPlan& r : plan.ranks) {
    for (int c : r.cpus)
      EXPECT_TRUE(seen.insert(c).second) << "PU " << c << " in two shares";
  }
}

TEST(BindingTest, ATopologyWithoutCpusIsAnErrorNotACrash) {
  NodeModel empty;  // what a bad XML could leave; the planner divided by 0
  BindRequest req;
  req.ntasks = 8;
  BindPlan plan;
  EXPECT_EQ(PlanBinding(empty, req, &plan).message(),
            "the topology has no CPUs to bind to");
  EXPECT_TRUE(plan.ranks.empty());
}

TEST(BindingTest, DgxH100FollowsTheDocumentedGpuNicPairing) {
  NodeModel m = Load("dgx-h100-8gpu.xml");
  ASSERT_EQ(m.gpus.size(), 8u) << "the BMC's VGA device is not a GPU";
  BindPlan plan = Plan(m, Tasks(8));
  const char* want[] = {"mlx5_0", "mlx5_3", "mlx5_4",  "mlx5_5",
                        "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(plan.ranks[i].gpu, i);
    EXPECT_EQ(NicName(m, plan.ranks[i]), want[i]) << "rank " << i;
    EXPECT_EQ(plan.ranks[i].numa, std::vector<int>{i < 4 ? 0 : 1})
        << "rank " << i;
    EXPECT_TRUE(Subset(plan.ranks[i].cpus, m.gpus[i].local_pus))
        << "rank " << i;
    EXPECT_EQ(plan.ranks[i].cores, 2);
    EXPECT_EQ(plan.ranks[i].cpus.size(), 4u)
        << "whole cores: both hyperthreads";
  }
  ExpectDisjoint(plan);
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(BindingTest, GpuBusOrderNotNumaOrder) {
  NodeModel m = Load("nps4-4gpu-hca-per-switch.xml");
  ASSERT_EQ(m.gpus.size(), 4u);
  BindPlan plan = Plan(m, Tasks(4));
  EXPECT_EQ(plan.ranks[0].numa, std::vector<int>{3});
  EXPECT_EQ(plan.ranks[3].numa, std::vector<int>{0});
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(NicName(m, plan.ranks[i]), "mlx5_" + std::to_string(i));
    EXPECT_EQ(plan.ranks[i].cpus, m.gpus[i].local_pus)
        << "sole rank of its domain";
  }
}

TEST(BindingTest, TiedNicsSpreadInBusOrderAndSharedNicIsShared) {
  NodeModel m = Load("two-gpus-per-switch.xml");
  ASSERT_EQ(m.gpus.size(), 4u) << "an NVSwitch is not a GPU";
  BindPlan plan = Plan(m, Tasks(4));
  EXPECT_EQ(NicName(m, plan.ranks[0]), "mlx5_0");
  EXPECT_EQ(NicName(m, plan.ranks[1]), "mlx5_1");
  EXPECT_EQ(NicName(m, plan.ranks[2]), "mlx5_2");
  EXPECT_EQ(NicName(m, plan.ranks[3]), "mlx5_2");
  ExpectDisjoint(plan);
}

TEST(BindingTest, NoLocalityAmdGpusFabricNicDisallowedPu) {
  NodeModel m = Load("no-locality-amd.xml");
  ASSERT_EQ(m.gpus.size(), 2u) << "classes 0380 and 1200 are GPUs";
  BindPlan plan = Plan(m, Tasks(2));
  for (const RankPlan& r : plan.ranks) {
    EXPECT_EQ(NicName(m, r), "hsi0") << "Slingshot beats the management NIC";
    EXPECT_EQ(std::count(r.cpus.begin(), r.cpus.end(), 3), 0)
        << "PU 3 is disallowed";
  }
  EXPECT_EQ(plan.ranks[0].cpus, (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(plan.ranks[1].cpus, (std::vector<int>{2, 6, 7}));
}

TEST(BindingTest, ManagementNicOnlyWhenNothingBetter) {
  NodeModel m = Load("no-locality-amd.xml");
  m.nics.erase(std::remove_if(m.nics.begin(), m.nics.end(),
                              [](const PciDevice& n) {
                                return n.tier != NicTier::kManagement;
                              }),
               m.nics.end());
  ASSERT_EQ(m.nics.size(), 1u);
  EXPECT_EQ(NicName(m, Plan(m, Tasks(1)).ranks[0]), "eth0");
  m.nics.clear();
  EXPECT_EQ(Plan(m, Tasks(1)).ranks[0].nic, -1);
}

TEST(BindingTest, StepGpusFromSlurmInBusOrder) {
  NodeModel m = Load("dgx-h100-8gpu.xml");
  BindRequest req = Tasks(2);
  req.gpus = std::vector<int>{5, 1};
  BindPlan plan = Plan(m, req);
  EXPECT_EQ(plan.step_gpus, (std::vector<int>{1, 5}));
  EXPECT_EQ(plan.ranks[0].gpu, 1);
  EXPECT_EQ(plan.ranks[0].gpu_slot, 0);
  EXPECT_EQ(plan.ranks[1].gpu, 5);
  EXPECT_EQ(NicName(m, plan.ranks[1]), "mlx5_9");
  EXPECT_EQ(plan.ranks[0].cores, 8) << "alone in its domain: the whole package";
}

TEST(BindingTest, MoreRanksThanGpusShareRoundRobin) {
  NodeModel m = Load("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, Tasks(16));
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(plan.ranks[i].gpu, static_cast<int>(i % 8));
    EXPECT_EQ(plan.ranks[i].cores, 1);
  }
  ExpectDisjoint(plan);
}

TEST(BindingTest, CpuOnlyNodeSplitsAllCores) {
  NodeModel m = Load("dgx-h100-8gpu.xml");
  m.gpus.clear();
  BindPlan plan = Plan(m, Tasks(4));
  for (const RankPlan& r : plan.ranks) {
    EXPECT_EQ(r.gpu, -1);
    EXPECT_EQ(r.cores, 4);
  }
  EXPECT_EQ(plan.ranks[0].numa, std::vector<int>{0});
  EXPECT_EQ(plan.ranks[3].numa, std::vector<int>{1});
  ExpectDisjoint(plan);
}

TEST(BindingTest, StepCpusRestrictAndWarnWhenGpuHasNoLocalCpu) {
  NodeModel m = Load("dgx-h100-8gpu.xml");
  BindRequest req = Tasks(8);
  req.cpus = std::vector<int>{0, 1, 2, 3, 16, 17, 18, 19};
  BindPlan plan = Plan(m, req);
  for (const RankPlan& r : plan.ranks) {
    EXPECT_TRUE(Subset(r.cpus, *req.cpus));
    EXPECT_EQ(r.cpus.size(), 1u);
  }
  ExpectDisjoint(plan);
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_EQ(plan.warnings[0],
            "no CPU of the step is local to GPU 0000:9a:00.0; its ranks use "
            "all step CPUs");
}

TEST(BindingTest, OverlappingDomainsStillGiveDisjointShares) {
  NodeModel m = Load("dgx-h100-8gpu.xml");
  // GPU 1 keeps its package's CPUs; GPU 5 is made local to the whole
  // machine (as when firmware gives no locality for one device).
  m.gpus[5].local_pus = AllPus(m);
  BindRequest req = Tasks(2);
  req.gpus = std::vector<int>{1, 5};
  BindPlan plan = Plan(m, req);
  ExpectDisjoint(plan);
  EXPECT_TRUE(Subset(plan.ranks[0].cpus, m.gpus[1].local_pus));
  EXPECT_EQ(plan.ranks[0].cores, 8);
  EXPECT_EQ(plan.ranks[1].cores, 8) << "the other package";
}

TEST(BindingTest, DomainAndNoneShares) {
  NodeModel m = Load("dgx-h100-8gpu.xml");
  BindRequest req = Tasks(8);
  req.parts.share = CpuShare::kDomain;
  BindPlan plan = Plan(m, req);
  EXPECT_EQ(plan.ranks[1].cpus, m.gpus[1].local_pus);
  req.parts.share = CpuShare::kNone;
  plan = Plan(m, req);
  EXPECT_TRUE(plan.ranks[1].cpus.empty());
  EXPECT_EQ(plan.ranks[1].numa, std::vector<int>{0})
      << "from the GPU's locality";
  EXPECT_EQ(NicName(m, plan.ranks[1]), "mlx5_3");
}

TEST(BindingTest, Errors) {
  NodeModel m = Load("two-gpus-per-switch.xml");
  BindRequest req = Tasks(1);
  req.gpus = std::vector<int>{4};
  BindPlan plan;
  EXPECT_EQ(PlanBinding(m, req, &plan).message(),
            "GPU index 4 is not on this node (it has 4 GPUs)");
  EXPECT_EQ(PlanBinding(m, Tasks(0), &plan).message(),
            "binding needs at least one local task");
  NodeModel none;
  EXPECT_EQ(LoadNodeModel("/nonexistent.xml", &none).code(),
            Status::Code::kInvalidArgument);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(BindingTest, GoldenJsonForEveryFixture) {
  for (const char* name :
       {"dgx-h100-8gpu", "dgx2-16gpu", "nps4-4gpu-hca-per-switch",
        "two-gpus-per-switch", "no-locality-amd"}) {
    NodeModel m = Load(std::string(name) + ".xml");
    BindPlan plan = Plan(m, Tasks(static_cast<uint32_t>(m.gpus.size())));
    // As dt-topo --topology FILE --json prints it (node rank 0).
    for (RankPlan& r : plan.ranks) r.rank = r.local_rank;
    EXPECT_EQ(PlanJson(m, plan), ReadFile(std::string(DT_SOURCE_DIR) +
                                          "/tests/golden/" + name + ".json"))
        << name;
  }
}

TEST(IndexListTest, ParseAndFormat) {
  std::vector<int> v;
  ASSERT_TRUE(ParseIndexList("3,0-1,7-9,1", "SLURM_STEP_GPUS", &v).ok());
  EXPECT_EQ(v, (std::vector<int>{0, 1, 3, 7, 8, 9}));
  EXPECT_EQ(FormatIndexList(v), "0-1,3,7-9");
  EXPECT_EQ(FormatIndexList({}), "");
  for (const char* bad : {"", "a", "1-", "3-1", "1,,2", "-1", "1 ,2"}) {
    EXPECT_EQ(ParseIndexList(bad, "SLURM_STEP_GPUS", &v).message(),
              std::string("SLURM_STEP_GPUS='") + bad +
                  "': expected a list like 0,2-3");
  }
}

// "0-1048576" is 9 bytes for a million indices: 100 of them in
// SLURM_STEP_GPUS took slurmstepd 17 s and 514 MiB before the cap.
std::string IndexBomb(int items) {
  std::string text;
  for (int i = 0; i < items; ++i) text += (i ? ",0-1048576" : "0-1048576");
  return text;
}

TEST(ParseIndexListTest, CapsTheTotalBeforeExpandingAnything) {
  const std::string cap = "more than 65536 indices (the cap)";
  struct Case {
    std::string text;
    std::string error;  // "" = accepted
    size_t size;
  } cases[] = {
      {"0-65535", "", 65536},
      {"1048576", "", 1},
      {"0-32767,0-32767", "", 32768},  // repeats count towards the cap
      {"0-65535,7", "SLURM_STEP_GPUS='0-65535,7': " + cap, 0},
      {"0-1048576", "SLURM_STEP_GPUS='0-1048576': " + cap, 0},
      {IndexBomb(100),
       "SLURM_STEP_GPUS='" + IndexBomb(100).substr(0, 64) + "... (" +
           std::to_string(IndexBomb(100).size()) + " bytes)': " + cap,
       0},
      {"0" + std::string(65536 * 2, ','),
       "SLURM_STEP_GPUS='0" + std::string(63, ',') + "... (131073 bytes)'" +
           ": expected a list like 0,2-3",
       0},
      {"1048577", "SLURM_STEP_GPUS='1048577': expected a list like 0,2-3", 0},
  };
  for (const Case& c : cases) {
    std::vector<int> v = {42};
    auto start = std::chrono::steady_clock::now();
    Status s = ParseIndexList(c.text, "SLURM_STEP_GPUS", &v);
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_LT(secs, 0.5) << c.text.substr(0, 80);  // was 17 s for the bomb
    EXPECT_EQ(s.message(), c.error) << c.text.substr(0, 80);
    EXPECT_EQ(v.size(), c.error.empty() ? c.size : 1u) << c.text.substr(0, 80);
  }
}

// The PUs local to any of the rank's GPUs (empty: one has no locality).
std::vector<int> LocalPus(const NodeModel& m, const RankPlan& r) {
  std::set<int> pus;
  for (int g : r.gpus) {
    if (m.gpus[g].local_pus.empty()) return {};
    pus.insert(m.gpus[g].local_pus.begin(), m.gpus[g].local_pus.end());
  }
  return std::vector<int>(pus.begin(), pus.end());
}

// Whether `nic` is of the best tier and nearest to one of the rank's GPUs.
bool NearestToOneOf(const NodeModel& m, const RankPlan& r, int nic) {
  int best_tier = 9;
  for (const PciDevice& n : m.nics)
    best_tier = std::min(best_tier, static_cast<int>(n.tier));
  if (static_cast<int>(m.nics[nic].tier) != best_tier) return false;
  if (r.gpus.empty()) return true;
  for (int g : r.gpus) {
    int best_dist = 1 << 30;
    for (const PciDevice& n : m.nics) {
      if (static_cast<int>(n.tier) == best_tier)
        best_dist = std::min(best_dist, TreeDistance(m.gpus[g], n));
    }
    if (TreeDistance(m.gpus[g], m.nics[nic]) == best_dist) return true;
  }
  return false;
}

void CheckInvariants(const NodeModel& m, const BindPlan& plan,
                     const std::string& what) {
  bool overlapping = false;
  for (const std::string& w : plan.warnings)
    overlapping |= w.find("overlapping") != std::string::npos;
  if (!overlapping) ExpectDisjoint(plan);
  for (const RankPlan& r : plan.ranks) {
    SCOPED_TRACE(what + " rank " + std::to_string(r.local_rank));
    EXPECT_FALSE(r.cpus.empty());
    EXPECT_FALSE(r.numa.empty());
    if (r.gpu >= 0) {
      EXPECT_EQ(r.gpus.front(), r.gpu);
    }
    std::vector<int> local = LocalPus(m, r);
    if (!local.empty()) {
      EXPECT_TRUE(Subset(r.cpus, local)) << "CPUs not local to its GPUs";
    }
    if (m.nics.empty()) continue;
    ASSERT_GE(r.nic, 0);
    ASSERT_FALSE(r.nics.empty());
    EXPECT_EQ(r.nics.front(), r.nic);
    for (int nic : r.nics) {
      EXPECT_TRUE(NearestToOneOf(m, r, nic)) << m.nics[nic].busid;
    }
  }
}

// Every real topology in ../shared/topologies (when present): loads, never
// crashes, and the plan satisfies the invariants.
TEST(RealTopologyTest, EveryPlanSatisfiesTheInvariants) {
  std::vector<std::string> files = RealTopologies();
  if (files.empty()) GTEST_SKIP() << "../shared/topologies is absent";
  for (const std::string& f : files) {
    NodeModel m;
    Status s = LoadNodeModel(f, &m);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(m.gpus.empty()) << f;
    uint32_t n = static_cast<uint32_t>(std::max<size_t>(m.gpus.size(), 1));
    for (uint32_t ntasks : {n, 2 * n, 1u}) {
      CheckInvariants(m, Plan(m, Tasks(ntasks)),
                      f + " x" + std::to_string(ntasks));
    }
    // A step that got only half of the node's CPUs: shares stay disjoint.
    BindRequest half = Tasks(n);
    std::vector<int> pus = AllPus(m);
    half.cpus =
        std::vector<int>(pus.begin(), pus.begin() + (pus.size() + 1) / 2);
    BindPlan plan = Plan(m, half);
    bool overlapping = false;
    for (const std::string& w : plan.warnings)
      overlapping |= w.find("overlapping") != std::string::npos;
    if (!overlapping) ExpectDisjoint(plan);
    for (const RankPlan& r : plan.ranks)
      EXPECT_TRUE(Subset(r.cpus, *half.cpus)) << f;
  }
}

}  // namespace
}  // namespace dist_train
