// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Ranks that drive several GPUs (--gpus-per-task, one launcher per node,
// fewer tasks than GPUs): each gets all of its GPUs, the NICs nearest to
// them and the union of their CPU shares; GPUs in no rank's plan warn.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "binding/binding.h"
#include "binding/binding_env.h"
#include "binding/plan_report.h"
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

BindPlan Plan(const NodeModel& m, uint32_t ntasks, uint32_t per_task = 0) {
  BindRequest req;
  req.ntasks = ntasks;
  req.gpus_per_task = per_task;
  BindPlan plan;
  Status s = PlanBinding(m, req, &plan);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return plan;
}

// The OpenFabrics (or first) names of a rank's NICs, best first.
std::vector<std::string> NicNames(const NodeModel& m, const RankPlan& r) {
  std::vector<std::string> out;
  for (int i : r.nics) {
    const PciDevice& n = m.nics[i];
    out.push_back(!n.verbs.empty()   ? n.verbs
                  : !n.names.empty() ? n.names[0]
                                     : n.busid);
  }
  return out;
}

std::vector<int> Range(int lo, int hi) {  // [lo, hi]
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

std::vector<int> Cat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  return a;
}

using Names = std::vector<std::string>;
using Ints = std::vector<int>;

// The DGX H100 fixture: GPU i <-> mlx5_{0,3,4,5,6,9,10,11}[i]; GPUs 0-3 on
// package/NUMA 0 (cores 0-7: PUs 0-7 and 16-23), 4-7 on 1 (PUs 8-15, 24-31).
const Names kDgxNics = {"mlx5_0", "mlx5_3", "mlx5_4",  "mlx5_5",
                        "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};

TEST(MultiGpuTest, OneTaskOnADgxGetsEveryGpuNicAndCore) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, 1);
  ASSERT_EQ(plan.ranks.size(), 1u);
  const RankPlan& r = plan.ranks[0];
  EXPECT_EQ(r.gpus, Range(0, 7));
  EXPECT_EQ(r.gpu_slots, Range(0, 7));
  EXPECT_EQ(r.gpu, 0);
  EXPECT_EQ(r.gpu_slot, 0);
  EXPECT_EQ(NicNames(m, r), kDgxNics) << "one per GPU, in GPU order";
  EXPECT_EQ(r.nic, r.nics[0]);
  EXPECT_EQ(r.cpus, Range(0, 31)) << "not one GPU's package (cores 0-7)";
  EXPECT_EQ(r.cores, 16);
  EXPECT_EQ(r.numa, (Ints{0, 1}));
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(MultiGpuTest, FourTasksOnEightGpusGetTwoNeighboursEach) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, 4);
  const Ints cpus[] = {
      Cat(Range(0, 3), Range(16, 19)), Cat(Range(4, 7), Range(20, 23)),
      Cat(Range(8, 11), Range(24, 27)), Cat(Range(12, 15), Range(28, 31))};
  for (int i = 0; i < 4; ++i) {
    const RankPlan& r = plan.ranks[i];
    SCOPED_TRACE("rank " + std::to_string(i));
    EXPECT_EQ(r.gpus, (Ints{2 * i, 2 * i + 1}));
    EXPECT_EQ(NicNames(m, r), (Names{kDgxNics[2 * i], kDgxNics[2 * i + 1]}));
    EXPECT_EQ(r.cpus, cpus[i]) << "half of its package";
    EXPECT_EQ(r.cores, 4);
    EXPECT_EQ(r.numa, Ints{i < 2 ? 0 : 1});
  }
  EXPECT_TRUE(plan.warnings.empty()) << plan.warnings[0];
}

TEST(MultiGpuTest, OneGpuPerTaskOnEightGpusNamesTheGpusLeftOut) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, 4, 1);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.ranks[i].gpus, Ints{i});
    EXPECT_EQ(plan.ranks[i].cores, 2) << "4 ranks share package 0";
  }
  EXPECT_EQ(plan.warnings,
            Names{"GPUs 4-7 are in no task's plan: 4 tasks with 1 GPU each "
                  "on 8 GPUs; use --gpus-per-task=2 or 8 tasks"});
}

TEST(MultiGpuTest, TasksThatDoNotDivideTheGpusLeaveTheRestOutLoudly) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, 3);
  EXPECT_EQ(plan.ranks[0].gpus, (Ints{0, 1}));
  EXPECT_EQ(plan.ranks[1].gpus, (Ints{2, 3}));
  EXPECT_EQ(plan.ranks[2].gpus, (Ints{4, 5}));
  EXPECT_EQ(plan.ranks[0].cpus, Cat(Range(0, 3), Range(16, 19)));
  EXPECT_EQ(plan.ranks[1].cpus, Cat(Range(4, 7), Range(20, 23)));
  EXPECT_EQ(plan.ranks[2].cpus, Cat(Range(8, 15), Range(24, 31)))
      << "alone on package 1";
  EXPECT_EQ(plan.warnings,
            Names{"GPUs 6-7 are in no task's plan: 3 tasks on 8 GPUs get 2 "
                  "each; use a task count that divides 8 (1, 2, 4 or 8)"});
  plan = Plan(m, 7);
  EXPECT_EQ(plan.warnings,
            Names{"GPU 7 is in no task's plan: 7 tasks on 8 GPUs get 1 each; "
                  "use a task count that divides 8 (1, 2, 4 or 8)"});
}

TEST(MultiGpuTest, ARankAcrossTwoPackagesGetsAShareOfEach) {
  // --gpus-per-task=3: rank 0 has GPUs 0-2 (package 0), rank 1 GPU 3
  // (package 0) and 4-5 (package 1). Package 0's 8 cores go 3:1 in
  // whole-core parts of 2; package 1's all to rank 1.
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, 2, 3);
  EXPECT_EQ(plan.ranks[0].gpus, (Ints{0, 1, 2}));
  EXPECT_EQ(plan.ranks[1].gpus, (Ints{3, 4, 5}));
  EXPECT_EQ(plan.ranks[0].cpus, Cat(Range(0, 5), Range(16, 21)));
  EXPECT_EQ(plan.ranks[0].cores, 6);
  EXPECT_EQ(plan.ranks[1].cpus, Cat(Range(6, 15), Range(22, 31)));
  EXPECT_EQ(plan.ranks[1].cores, 10);
  EXPECT_EQ(plan.ranks[1].numa, (Ints{0, 1}));
  EXPECT_EQ(NicNames(m, plan.ranks[1]), (Names{"mlx5_5", "mlx5_6", "mlx5_9"}));
  EXPECT_EQ(plan.warnings,
            Names{"GPUs 6-7 are in no task's plan: 2 tasks with 3 GPUs each "
                  "on 8 GPUs; use --gpus-per-task=4"});
}

TEST(MultiGpuTest, MoreGpusPerTaskThanTheStepHasWrapAround) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, 8, 2);
  EXPECT_EQ(plan.ranks[3].gpus, (Ints{6, 7}));
  EXPECT_EQ(plan.ranks[4].gpus, (Ints{0, 1})) << "shared round-robin";
  EXPECT_TRUE(plan.warnings.empty());
  plan = Plan(m, 1, 64);
  EXPECT_EQ(plan.ranks[0].gpus, Range(0, 7)) << "never more than the step";
}

TEST(MultiGpuTest, StepGpusAreDividedInBusOrder) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindRequest req;
  req.ntasks = 2;
  req.gpus = Ints{7, 1, 5, 6};
  BindPlan plan;
  ASSERT_TRUE(PlanBinding(m, req, &plan).ok());
  EXPECT_EQ(plan.ranks[0].gpus, (Ints{1, 5}));
  EXPECT_EQ(plan.ranks[0].gpu_slots, (Ints{0, 1}));
  EXPECT_EQ(plan.ranks[1].gpus, (Ints{6, 7}));
  EXPECT_EQ(plan.ranks[1].gpu_slots, (Ints{2, 3}));
  EXPECT_EQ(plan.ranks[0].numa, (Ints{0, 1})) << "GPU 1 and GPU 5";
}

TEST(MultiGpuTest, TiedNicsStillSpreadOverTheGpusOfOneRank) {
  // Two GPUs and two HCAs per switch, then two GPUs sharing one HCA.
  NodeModel m = Fixture("two-gpus-per-switch.xml");
  BindPlan plan = Plan(m, 1);
  EXPECT_EQ(NicNames(m, plan.ranks[0]), (Names{"mlx5_0", "mlx5_1", "mlx5_2"}));
  plan = Plan(m, 2);
  EXPECT_EQ(NicNames(m, plan.ranks[0]), (Names{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(NicNames(m, plan.ranks[1]), Names{"mlx5_2"});
}

TEST(MultiGpuTest, DomainAndNoneSharesCoverEveryGpu) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindRequest req;
  req.ntasks = 1;
  req.parts.share = CpuShare::kDomain;
  BindPlan plan;
  ASSERT_TRUE(PlanBinding(m, req, &plan).ok());
  EXPECT_EQ(plan.ranks[0].cpus, Range(0, 31));
  EXPECT_EQ(plan.ranks[0].cores, 16);
  req.parts.share = CpuShare::kNone;
  ASSERT_TRUE(PlanBinding(m, req, &plan).ok());
  EXPECT_TRUE(plan.ranks[0].cpus.empty());
  EXPECT_EQ(plan.ranks[0].numa, (Ints{0, 1})) << "both GPUs' localities";
}

TEST(MultiGpuTest, CpuOnlyRanksAreUnchanged) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  m.gpus.clear();
  BindPlan plan = Plan(m, 2, 4);
  EXPECT_TRUE(plan.ranks[0].gpus.empty());
  EXPECT_EQ(plan.ranks[0].gpu, -1);
  EXPECT_EQ(plan.ranks[0].cores, 8);
  EXPECT_TRUE(plan.warnings.empty());
}

// The recorded topologies in ../shared/topologies (never copied into the
// project): skipped with the reason when absent.
std::string RealTopology(const std::string& name) {
  return std::string(DT_SOURCE_DIR) + "/../shared/topologies/" + name;
}

bool Present(const std::string& path) { return std::ifstream(path).good(); }

std::vector<std::string> BusIds(const NodeModel& m, const RankPlan& r) {
  std::vector<std::string> ids;
  for (int g : r.gpus) ids.push_back(m.gpus[g].busid);
  return ids;
}

TEST(RealTopologyMultiGpuTest, Dgx2h16V100With1_2_4_8Tasks) {
  std::string path = RealTopology("nvidia-dgx2h-16xV100-stripped.hwloc.xml");
  if (!Present(path)) GTEST_SKIP() << path << " is absent";
  NodeModel m;
  ASSERT_TRUE(LoadNodeModel(path, &m).ok());
  ASSERT_EQ(m.gpus.size(), 16u);
  ASSERT_TRUE(m.nics.empty()) << "stripped: no NICs";
  // Stripped to one PU per GPU domain quarter: PUs 0-1 (NUMA 0, GPUs
  // 0-7), 24-25 (NUMA 1, GPUs 8-15).
  const Names low = {"0000:34:00.0", "0000:36:00.0", "0000:39:00.0",
                     "0000:3b:00.0", "0000:57:00.0", "0000:59:00.0",
                     "0000:5c:00.0", "0000:5e:00.0"};
  const Names high = {"0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0",
                      "0000:be:00.0", "0000:e0:00.0", "0000:e2:00.0",
                      "0000:e5:00.0", "0000:e7:00.0"};
  BindPlan plan = Plan(m, 1);
  EXPECT_EQ(plan.ranks[0].gpus, Range(0, 15));
  EXPECT_EQ(plan.ranks[0].cpus, (Ints{0, 1, 24, 25}));
  EXPECT_EQ(plan.ranks[0].numa, (Ints{0, 1}));
  EXPECT_EQ(plan.ranks[0].nic, -1);
  EXPECT_TRUE(plan.ranks[0].nics.empty());
  EXPECT_TRUE(plan.warnings.empty());

  plan = Plan(m, 2);
  EXPECT_EQ(BusIds(m, plan.ranks[0]), low);
  EXPECT_EQ(BusIds(m, plan.ranks[1]), high);
  EXPECT_EQ(plan.ranks[0].cpus, (Ints{0, 1}));
  EXPECT_EQ(plan.ranks[1].cpus, (Ints{24, 25}));
  EXPECT_EQ(plan.ranks[0].numa, Ints{0});
  EXPECT_EQ(plan.ranks[1].numa, Ints{1});
  EXPECT_TRUE(plan.warnings.empty());

  plan = Plan(m, 4);
  const Ints cpus4[] = {{0}, {1}, {24}, {25}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.ranks[i].gpus, Range(4 * i, 4 * i + 3)) << i;
    EXPECT_EQ(plan.ranks[i].cpus, cpus4[i]) << i;
    EXPECT_EQ(plan.ranks[i].cores, 1) << i;
  }
  EXPECT_TRUE(plan.warnings.empty());

  plan = Plan(m, 8);
  const Ints cpus8[] = {{0}, {1}, {0}, {1}, {24}, {25}, {24}, {25}};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(plan.ranks[i].gpus, (Ints{2 * i, 2 * i + 1})) << i;
    EXPECT_EQ(plan.ranks[i].cpus, cpus8[i]) << i;
  }
  EXPECT_EQ(plan.warnings,
            (Names{"4 ranks share 2 cores (CPUs 0-1): shares are overlapping",
                   "4 ranks share 2 cores (CPUs 24-25): shares are "
                   "overlapping"}));
}

TEST(RealTopologyMultiGpuTest, DellXe8640With1And2Tasks) {
  std::string path = RealTopology("dell-xe8640-4xH100-ib.hwloc.xml");
  if (!Present(path)) GTEST_SKIP() << path << " is absent";
  NodeModel m;
  ASSERT_TRUE(LoadNodeModel(path, &m).ok());
  ASSERT_EQ(m.gpus.size(), 4u);
  // SNC4: each GPU is local to one sub-NUMA node (1, 3, 7, 5), with 14
  // cores (28 PUs); GPU 0's nearest HCA is the CX-6's first port, GPUs 2
  // and 3 share mlx5_3.
  auto cpus = [](std::initializer_list<int> starts) {
    Ints v;
    for (int s : starts) v = Cat(v, Range(s, s + 13));
    return v;
  };
  BindPlan plan = Plan(m, 1);
  const RankPlan& r = plan.ranks[0];
  EXPECT_EQ(BusIds(m, r), (Names{"0000:4e:00.0", "0000:5f:00.0", "0000:cb:00.0",
                                 "0000:db:00.0"}));
  EXPECT_EQ(NicNames(m, r), (Names{"mlx5_0", "mlx5_2", "mlx5_3"}));
  EXPECT_EQ(r.cpus, cpus({14, 42, 70, 98, 126, 154, 182, 210}));
  EXPECT_EQ(r.cores, 56);
  EXPECT_EQ(r.numa, (Ints{1, 3, 5, 7}));
  EXPECT_TRUE(plan.warnings.empty());

  plan = Plan(m, 2);
  EXPECT_EQ(BusIds(m, plan.ranks[0]), (Names{"0000:4e:00.0", "0000:5f:00.0"}));
  EXPECT_EQ(NicNames(m, plan.ranks[0]), (Names{"mlx5_0", "mlx5_2"}));
  EXPECT_EQ(plan.ranks[0].cpus, cpus({14, 42, 126, 154}));
  EXPECT_EQ(plan.ranks[0].numa, (Ints{1, 3}));
  EXPECT_EQ(BusIds(m, plan.ranks[1]), (Names{"0000:cb:00.0", "0000:db:00.0"}));
  EXPECT_EQ(NicNames(m, plan.ranks[1]), Names{"mlx5_3"});
  EXPECT_EQ(plan.ranks[1].cpus, cpus({70, 98, 182, 210}));
  EXPECT_EQ(plan.ranks[1].numa, (Ints{5, 7}));
  EXPECT_TRUE(plan.warnings.empty());
}

// A nearest best-tier NIC of GPU g among `nics`?
bool HasNearest(const NodeModel& m, int g, const Ints& nics) {
  std::pair<int, int> best{1 << 30, 1 << 30};
  for (const PciDevice& n : m.nics)
    best =
        std::min(best, {static_cast<int>(n.tier), TreeDistance(m.gpus[g], n)});
  for (int i : nics) {
    const PciDevice& n = m.nics[i];
    if (std::make_pair(static_cast<int>(n.tier), TreeDistance(m.gpus[g], n)) ==
        best)
      return true;
  }
  return false;
}

TEST(RealTopologyMultiGpuTest, EveryGpuIsInAPlanWithItsNearestNic) {
  std::string root = RealTopology("");
  const char* files[] = {
      "aws-g4dn-metal-8xT4-1xefa.hwloc.xml",
      "dell-xe8640-4xH100-ib.hwloc.xml",
      "hpe-ex235a-tioga-8xMI250X-gcd-4xslingshot.hwloc.xml",
      "hpe-ex255a-tuolumne-4xMI300A-spx-4xslingshot.hwloc.xml",
      "ibm-ac922-lassen-4xV100-4xib.hwloc.xml",
      "jureca-dc-gpu-4xA100-4xHDR.hwloc.xml",
      "juropa3-gpu-2xK20X-mlx4-nolocality.hwloc1.xml",
      "juwels-booster-4xA100-4xHDR.hwloc.xml",
      "juwels-cluster-gpu-4xV100-2xEDR.hwloc1.xml",
      "meluxina-gpu-4xA100-2xHDR.hwloc1.xml",
      "supermicro-corona-8xMI50-1xhdr.hwloc.xml",
      "derived/aws-p4d.24xlarge-8xA100-4xEFA.from-nccl.hwloc.xml",
      "derived/azure-ndv5-8xH100-8xNDR.from-nccl.hwloc.xml",
      "derived/rccl-8xMI300X-8xCX7.from-nccl.hwloc.xml"};
  int seen = 0;
  for (const char* f : files) {
    std::string path = root + f;
    if (!Present(path)) continue;
    ++seen;
    NodeModel m;
    ASSERT_TRUE(LoadNodeModel(path, &m).ok()) << f;
    uint32_t n = static_cast<uint32_t>(m.gpus.size());
    for (uint32_t ntasks : {1u, n / 2}) {
      SCOPED_TRACE(std::string(f) + " x" + std::to_string(ntasks));
      BindPlan plan = Plan(m, ntasks);
      std::set<int> gpus, cpus;
      for (const RankPlan& r : plan.ranks) {
        EXPECT_EQ(r.gpus.size(), n / ntasks);
        for (int g : r.gpus) {
          EXPECT_TRUE(gpus.insert(g).second) << "GPU " << g << " twice";
          if (!m.nics.empty()) {
            EXPECT_TRUE(HasNearest(m, g, r.nics)) << m.gpus[g].busid;
          }
        }
        for (int c : r.cpus) {
          EXPECT_TRUE(cpus.insert(c).second) << "PU " << c << " twice";
        }
      }
      EXPECT_EQ(gpus.size(), n);
      for (const std::string& w : plan.warnings)
        EXPECT_EQ(w.find("in no task's plan"), std::string::npos) << w;
    }
  }
  if (seen == 0) GTEST_SKIP() << root << " is absent";
}

EnvMap Env(const NodeModel& m, const BindPlan& plan, int rank,
           const BindingEnvInputs& in) {
  EnvAssignments a = BindingEnv(m, plan, plan.ranks[rank], in);
  return EnvMap(a.begin(), a.end());
}

TEST(MultiGpuEnvTest, ARankSeesItsOwnGpusAndUsesAllOfItsNics) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindPlan plan = Plan(m, 4);
  BindingEnvInputs in;
  in.nccl_ib_hca = true;
  in.socket_interfaces = {"ibp77s0", "ibp94s0"};
  EnvMap env = Env(m, plan, 1, in);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "2,3");
  EXPECT_EQ(env["DT_LOCAL_GPU"], "0");
  EXPECT_EQ(env["DT_GPU"], m.gpus[2].busid);
  EXPECT_EQ(env["DT_GPUS"], m.gpus[2].busid + "," + m.gpus[3].busid);
  EXPECT_EQ(env["DT_NIC"], "mlx5_4");
  EXPECT_EQ(env["DT_NIC_PCI"], m.nics[plan.ranks[1].nics[0]].busid);
  EXPECT_EQ(env["DT_NICS"], "mlx5_4,mlx5_5");
  EXPECT_EQ(env["UCX_NET_DEVICES"], "mlx5_4:1,mlx5_5:1");
  EXPECT_EQ(env["NCCL_IB_HCA"], "=mlx5_4,mlx5_5");
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "=ibp77s0") << "the best NIC only";
  EXPECT_EQ(env["GLOO_SOCKET_IFNAME"], "ibp77s0");
  EXPECT_EQ(env["OMP_NUM_THREADS"], "4");
  EXPECT_EQ(env["DT_CPUS"], "4-7,20-23");
}

TEST(MultiGpuEnvTest, SlurmsStepLocalNumbersAreKeptPerSlot) {
  // With device cgroups Slurm numbers the step's GPUs 0..n-1.
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  BindRequest req;
  req.ntasks = 2;
  req.gpus = Ints{4, 5, 6, 7};
  BindPlan plan;
  ASSERT_TRUE(PlanBinding(m, req, &plan).ok());
  BindingEnvInputs in;
  EXPECT_EQ(Env(m, plan, 1, in)["CUDA_VISIBLE_DEVICES"], "6,7");
  in.slurm_cuda_visible_devices = "0,1,2,3";
  EXPECT_EQ(Env(m, plan, 1, in)["CUDA_VISIBLE_DEVICES"], "2,3");
  in.slurm_cuda_visible_devices = "3";  // Slurm's per-task value: not ours
  EXPECT_EQ(Env(m, plan, 1, in)["CUDA_VISIBLE_DEVICES"], "6,7");
}

TEST(MultiGpuEnvTest, OneTaskPerNodeSeesTheWholeStep) {
  NodeModel m = Fixture("no-locality-amd.xml");
  BindPlan plan = Plan(m, 1);
  EnvMap env = Env(m, plan, 0, BindingEnvInputs());
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(env["ROCR_VISIBLE_DEVICES"], "0,1") << "every vendor variable";
  EXPECT_EQ(env["DT_NIC"], "hsi0");
  EXPECT_EQ(env.count("DT_NICS"), 0u) << "one NIC: no list";
  EXPECT_EQ(env["UCX_NET_DEVICES"], "hsi0");
}

TEST(GpuPositionsTest, BusIdsToBusOrderPositions) {
  NodeModel m = Fixture("dgx-h100-8gpu.xml");
  Ints got;
  ASSERT_TRUE(
      GpuPositions(m, m.gpus[5].busid + "," + m.gpus[2].busid, "DT_GPUS", &got)
          .ok());
  EXPECT_EQ(got, (Ints{2, 5}));
  EXPECT_EQ(GpuPositions(m, "0000:ff:00.0", "DT_GPUS", &got).message(),
            "DT_GPUS names GPU '0000:ff:00.0', which is not on this node (8 "
            "GPUs)");
  EXPECT_EQ(GpuPositions(m, "", "DT_GPUS", &got).message(),
            "DT_GPUS names GPU '', which is not on this node (8 GPUs)");
  EXPECT_EQ(got, (Ints{2, 5})) << "unchanged on error";
}

TEST(ParseGpusPerTaskTest, CountsWithOptionalTypes) {
  struct Case {
    const char* text;
    uint32_t want;  // 0: an error
  } cases[] = {{"2", 2},  {"a100:2", 2}, {"a100:1,v100:2", 3}, {"4096", 4096},
               {"0", 0},  {"", 0},       {"a100:", 0},         {":2", 0},
               {"2x", 0}, {"4097", 0},   {"2048,a:2049", 0}};
  for (const Case& c : cases) {
    uint32_t k = 7;
    Status s = ParseGpusPerTask(c.text, "SLURM_GPUS_PER_TASK", &k);
    EXPECT_EQ(s.ok(), c.want != 0) << c.text;
    EXPECT_EQ(k, c.want != 0 ? c.want : 7u) << c.text;
  }
  uint32_t k = 0;
  EXPECT_EQ(ParseGpusPerTask("two", "SLURM_GPUS_PER_TASK", &k).message(),
            "SLURM_GPUS_PER_TASK='two': expected a count like 2 or a100:2");
  EXPECT_EQ(
      ParseGpusPerTask("2048,a:2049", "SLURM_GPUS_PER_TASK", &k).message(),
      "SLURM_GPUS_PER_TASK='2048,a:2049': more than 4096 GPUs per task");
}

}  // namespace
}  // namespace dist_train
