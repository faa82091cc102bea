// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/node_binding.h"

#include <gtest/gtest.h>
#include <sched.h>

#include "base/slurm_ids.h"
#include "binding/topology.h"
#include "testing/testing_topologies.h"

namespace dist_train {
namespace {

using testing_topologies::Fixture;

// A source that loads a fixture and asks for `ntasks` ranks; global rank =
// 10 + local rank.
class FixtureSource : public BindSource {
 public:
  Status LoadModel(NodeModel* model, std::string* source) override {
    ++loads;
    *source = xml;
    if (!load_error.ok()) return load_error;
    return LoadNodeModel(xml, model);
  }
  Status Request(const NodeModel& /*model*/, BindParts parts,
                 BindRequest* req) override {
    req->ntasks = ntasks;
    req->parts = parts;
    return Status::OK();
  }
  void NameRanks(BindPlan* plan) override {
    for (RankPlan& r : plan->ranks) r.rank = 10 + r.local_rank;
  }
  std::vector<std::string> UsableInterfaces() override {
    ++interface_lists;
    return interfaces;
  }
  std::string RdmaNote(const NodeModel& /*model*/,
                       const BindPlan& plan) override {
    rdma_checked_ranks = plan.ranks.size();
    return rdma;
  }
  std::string xml = Fixture("dgx-h100-8gpu.xml");
  std::string rdma;
  size_t rdma_checked_ranks = 0;
  uint32_t ntasks = 8;
  std::vector<std::string> interfaces = {"eno3", "ibp60s0"};
  int interface_lists = 0;
  Status load_error;
  int loads = 0;
};

JobOptions Words(const char* text) {
  JobOptions o;
  EXPECT_TRUE(ParseJobOptions(text, &o).ok()) << text;
  return o;
}

TEST(BindsStepTest, TaskModeStepsWithSomePartOn) {
  PluginConfig node_default;
  node_default.default_mode = Mode::kNode;
  PluginConfig bind_none;
  bind_none.bind = BindParts{false, false, false};
  struct Case {
    const char* name;
    PluginConfig cfg;
    const char* words;
    uint32_t step_id;
    bool want;
  } cases[] = {
      {"task mode step", {}, "on", 3, true},
      {"the batch step", {}, "on", kBatchStepId, false},
      {"node mode", {}, "mode=node", 3, false},
      {"node mode by default", node_default, "on", 3, false},
      {"task mode over a node default", node_default, "mode=task", 3, true},
      {"bind=none", {}, "bind=none", 3, false},
      {"admin bind none", bind_none, "on", 3, false},
      {"job bind=cpu over admin none", bind_none, "bind=cpu", 3, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(BindsStep(c.cfg, Words(c.words), c.step_id), c.want) << c.name;
  }
}

TEST(PlanNodeBindingTest, PlansEveryLocalRankAndNamesItsGlobalRank) {
  FixtureSource source;
  NodeBinding b;
  PlanNodeBinding({}, Words("on"), source, &b);
  ASSERT_TRUE(b.bound) << b.note;
  EXPECT_EQ(b.topology_source, source.xml);
  ASSERT_EQ(b.plan.ranks.size(), 8u);
  EXPECT_EQ(b.model.gpus.size(), 8u);
  for (uint32_t i = 0; i < 8; ++i) {
    const RankPlan* r = RankOf(b, i);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->local_rank, i);
    EXPECT_EQ(r->rank, 10 + i);
    EXPECT_GE(r->gpu, 0);
  }
  EXPECT_EQ(RankOf(b, 8), nullptr);
}

TEST(PlanNodeBindingTest, UnusableHcasJoinTheNodesNoteWhenNicsAreBound) {
  FixtureSource source;
  source.rdma = "dist-train: warning: NCCL will fall back to TCP sockets";
  NodeBinding b;
  PlanNodeBinding({}, Words("on"), source, &b);
  ASSERT_TRUE(b.bound);
  EXPECT_EQ(source.rdma_checked_ranks, 8u) << "the whole plan is checked";
  EXPECT_EQ(b.note, source.rdma);
  FixtureSource no_nic;
  no_nic.rdma = source.rdma;
  NodeBinding c;
  PlanNodeBinding({}, Words("bind=cpu+gpu"), no_nic, &c);
  EXPECT_EQ(no_nic.rdma_checked_ranks, 0u);
  EXPECT_EQ(c.note, "");
}

TEST(PlanNodeBindingTest, AFailureMeansNoBindingAndANote) {
  FixtureSource source;
  source.load_error = Status::IOError("topology.xml: no such file");
  NodeBinding b;
  PlanNodeBinding({}, Words("on"), source, &b);
  EXPECT_FALSE(b.bound);
  EXPECT_EQ(b.note,
            "dist-train: warning: no topology binding: topology.xml: no such "
            "file");
  EXPECT_EQ(RankOf(b, 0), nullptr);
  EXPECT_TRUE(RankBindingEnv({}, Words("on"), b, 0, {}).empty());
  EXPECT_EQ(ApplyRankAffinity({}, Words("on"), b, 0), "");
}

TEST(RankOfTest, FindsARankOutOfIndexOrder) {
  NodeBinding b;
  b.bound = true;
  b.plan.ranks.resize(2);
  b.plan.ranks[0].local_rank = 1;
  b.plan.ranks[1].local_rank = 0;
  EXPECT_EQ(RankOf(b, 0), &b.plan.ranks[1]);
  EXPECT_EQ(RankOf(b, 1), &b.plan.ranks[0]);
  b.bound = false;
  EXPECT_EQ(RankOf(b, 0), nullptr);
}

TEST(RankBindingEnvTest, GivesTheRanksGpuAndKeepsSlurmsDeviceList) {
  FixtureSource source;
  NodeBinding b;
  PlanNodeBinding({}, Words("on"), source, &b);
  ASSERT_TRUE(b.bound) << b.note;
  EnvAssignments env = RankBindingEnv({}, Words("on"), b, 3, {});
  EnvMap got(env.begin(), env.end());
  EXPECT_EQ(got["DT_LOCAL_GPU"], "3");
  EXPECT_EQ(got["DT_GPU"], b.model.gpus[b.plan.ranks[3].gpu].busid);
  EXPECT_EQ(got["CUDA_VISIBLE_DEVICES"], "0,1,2,3,4,5,6,7");
  // Slurm's list of the step's GPUs (local to its device cgroup) is kept.
  EnvAssignments slurm = RankBindingEnv(
      {}, Words("on"), b, 3, {{"CUDA_VISIBLE_DEVICES", "7,6,5,4,3,2,1,0"}});
  EnvMap kept(slurm.begin(), slurm.end());
  EXPECT_EQ(kept["CUDA_VISIBLE_DEVICES"], "7,6,5,4,3,2,1,0");
  // bind=cpu: no GPU variables.
  EnvAssignments cpu_only = RankBindingEnv({}, Words("bind=cpu"), b, 3, {});
  EnvMap cpu(cpu_only.begin(), cpu_only.end());
  EXPECT_EQ(cpu.count("DT_LOCAL_GPU"), 0u);
}

TEST(RankBindingEnvTest, SocketInterfaceFromTheNodesUsableInterfaces) {
  FixtureSource source;
  NodeBinding b;
  PlanNodeBinding({}, Words("on"), source, &b);
  ASSERT_TRUE(b.bound) << b.note;
  EXPECT_EQ(source.interface_lists, 1) << "once per node, not per rank";
  EnvAssignments one = RankBindingEnv({}, Words("on"), b, 1, {});
  EnvMap got(one.begin(), one.end());
  EXPECT_EQ(got["NCCL_SOCKET_IFNAME"], "=ibp60s0");
  EXPECT_EQ(got["GLOO_SOCKET_IFNAME"], "ibp60s0");
  EnvAssignments zero = RankBindingEnv({}, Words("on"), b, 0, {});
  EXPECT_EQ(EnvMap(zero.begin(), zero.end()).count("NCCL_SOCKET_IFNAME"), 0u)
      << "rank 0's ibp26s0 has no address here";
  // NICs not bound: the interfaces are not even listed.
  FixtureSource no_nic;
  NodeBinding c;
  PlanNodeBinding({}, Words("bind=cpu+gpu"), no_nic, &c);
  ASSERT_TRUE(c.bound) << c.note;
  EXPECT_EQ(no_nic.interface_lists, 0);
}

TEST(ApplyRankAffinityTest, PinsTheCallerOnlyWhenCpusAreBound) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  int cpu = -1;
  for (int i = 0; i < CPU_SETSIZE && cpu < 0; ++i)
    if (CPU_ISSET(i, &before)) cpu = i;
  ASSERT_GE(cpu, 0);
  NodeBinding b;
  b.bound = true;
  b.plan.ranks.resize(1);
  b.plan.ranks[0].cpus = {cpu};
  EXPECT_EQ(ApplyRankAffinity({}, Words("bind=gpu"), b, 0), "");
  cpu_set_t now;
  ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &before));  // bind=gpu: CPUs untouched
  EXPECT_EQ(ApplyRankAffinity({}, Words("on"), b, 0), "");
  ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
  EXPECT_EQ(CPU_COUNT(&now), 1);
  EXPECT_TRUE(CPU_ISSET(cpu, &now));
  b.plan.ranks[0].cpus = {CPU_SETSIZE + 5};
  EXPECT_NE(ApplyRankAffinity({}, Words("on"), b, 0)
                .find("dist-train: warning: local rank 0: "),
            std::string::npos);
  ASSERT_EQ(sched_setaffinity(0, sizeof(before), &before), 0);
}

}  // namespace
}  // namespace dist_train
