// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "submit.h"

#include <gtest/gtest.h>

#include "contract/step_facts.h"
#include "fake_spank_host.h"
#include "state.h"
#include "stepd.h"

namespace dist_train {
namespace {

class SrunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    srun_ = FakeSpankHost();
    st_ = PluginState();
    srun_.context = S_CTX_LOCAL;
    srun_.items = {{S_JOB_ID, 1000}};
    srun_.process = {{"SLURM_NODELIST", "node[3-4]"}};
    srun_.end_times[1000] = 1767225600;
    srun_.node_addrs = {{"node3", "10.0.0.3"}};
  }

  FakeSpankHost srun_;
  PluginState st_;
};

TEST_F(SrunTest, LooksUpTheStepOnceAndExportsTheFacts) {
  struct Case {
    const char* name;
    AddrPolicy policy;
    const char* nodelist;  // srun's SLURM_NODELIST; nullptr = unset
    int addr_rpcs;
    const char* want;
  } cases[] = {
      {"hostname", AddrPolicy::kHostname, "node[3-4]", 0,
       "job=1000,end=1767225600"},
      {"nodeaddr", AddrPolicy::kNodeAddr, "node[3-4]", 1,
       "job=1000,end=1767225600,node=node3,addr=10.0.0.3"},
      {"nodeaddr, unknown node", AddrPolicy::kNodeAddr, "node9", 1,
       "job=1000,end=1767225600"},
      {"nodeaddr, no node list", AddrPolicy::kNodeAddr, nullptr, 0,
       "job=1000,end=1767225600"},
  };
  for (const Case& c : cases) {
    SetUp();
    GiveOption(&st_, "on");
    st_.config.master_addr = c.policy;
    srun_.process.erase("SLURM_NODELIST");
    if (c.nodelist) srun_.process["SLURM_NODELIST"] = c.nodelist;
    EXPECT_EQ(SrunLocalUserInit(srun_, st_), 0) << c.name;
    EXPECT_EQ(srun_.end_time_rpcs, 1) << c.name;
    EXPECT_EQ(srun_.node_addr_rpcs, c.addr_rpcs) << c.name;
    ASSERT_TRUE(srun_.process.count(kStepFactsVar)) << c.name;
    EXPECT_EQ(srun_.process.at(kStepFactsVar), c.want) << c.name;
    EXPECT_TRUE(srun_.verboses.empty()) << c.name;
  }
}

TEST_F(SrunTest, NeverPassesOnAnEnclosingStepsFacts) {
  struct Case {
    const char* name;
    bool given;
    const char* options;
    bool job_id;
    int rpcs;
  } cases[] = {
      {"no --dist-train", false, "on", true, 0},
      {"--dist-train=off", true, "off", true, 0},
      {"no job id", true, "on", false, 0},
  };
  for (const Case& c : cases) {
    SetUp();
    if (c.given) GiveOption(&st_, c.options);
    if (!c.job_id) srun_.items.clear();
    srun_.process[kStepFactsVar] = "job=1,end=5";
    EXPECT_EQ(SrunLocalUserInit(srun_, st_), 0) << c.name;
    EXPECT_EQ(srun_.process.count(kStepFactsVar), 0u) << c.name;
    EXPECT_EQ(srun_.end_time_rpcs + srun_.node_addr_rpcs, c.rpcs) << c.name;
  }
}

TEST_F(SrunTest, AFailedLookupExportsNothingAndNeverFailsSrun) {
  GiveOption(&st_, "on");
  srun_.end_times.clear();
  srun_.process[kStepFactsVar] = "job=1,end=5";
  EXPECT_EQ(SrunLocalUserInit(srun_, st_), 0);
  EXPECT_EQ(srun_.process.count(kStepFactsVar), 0u);
  EXPECT_EQ(srun_.verboses,
            std::vector<std::string>{"dist-train: job 1000 unknown"});
  EXPECT_TRUE(srun_.errors.empty());
}

// srun -> slurmstepd: what srun exports is what each slurmstepd needs, so
// no slurmstepd asks slurmctld anything.
TEST_F(SrunTest, SlurmstepdUsesSrunsFactsWithoutAnyRpc) {
  struct Case {
    const char* name;
    const char* step_nodelist;  // the slurmstepd's SLURM_STEP_NODELIST
    int stepd_addr_rpcs;
    const char* addr;
  } cases[] = {
      {"same first node", "node[3-4]", 0, "10.0.0.3"},
      {"another first node", "node[4-5]", 1, "10.0.0.4"},
  };
  for (const Case& c : cases) {
    SetUp();
    GiveOption(&st_, "on");
    st_.config.master_addr = AddrPolicy::kNodeAddr;
    ASSERT_EQ(SrunLocalUserInit(srun_, st_), 0);
    FakeSpankHost stepd;
    stepd.items = {{S_JOB_ID, 1000}, {S_JOB_STEPID, 0}};
    stepd.env = {{kStepFactsVar, srun_.process.at(kStepFactsVar)},
                 {"SLURM_STEP_NODELIST", c.step_nodelist}};
    stepd.node_addrs = {{"node4", "10.0.0.4"}};
    EXPECT_EQ(StepdInitPostOpt(stepd, st_), 0) << c.name;
    EXPECT_EQ(stepd.end_time_rpcs, 0) << c.name;
    EXPECT_EQ(stepd.node_addr_rpcs, c.stepd_addr_rpcs) << c.name;
    EXPECT_EQ(st_.job_end_time, 1767225600) << c.name;
    EXPECT_EQ(st_.first_node_addr, c.addr) << c.name;
  }
}

TEST_F(SrunTest, SubmitMakesAFreshTokenForANewJobAndKeepsSrunsValid) {
  GiveOption(&st_, "on");
  srun_.context = S_CTX_ALLOCATOR;
  srun_.process["DT_JOB_TOKEN"] = "enclosing-job";
  EXPECT_EQ(SubmitPostOpt(srun_, st_, /*allocator=*/true), 0);
  const std::string fresh = srun_.process.at("DT_JOB_TOKEN");
  EXPECT_NE(fresh, "enclosing-job");
  EXPECT_EQ(srun_.process.at(kOptionEnvVar), FormatJobOptions(st_.options));
  EXPECT_EQ(SubmitPostOpt(srun_, st_, /*allocator=*/false), 0);
  EXPECT_EQ(srun_.process.at("DT_JOB_TOKEN"), fresh);
  srun_.process["DT_JOB_TOKEN"] = "short";
  EXPECT_EQ(SubmitPostOpt(srun_, st_, /*allocator=*/false), -1);
  ASSERT_EQ(srun_.errors.size(), 1u);
  EXPECT_EQ(srun_.errors[0].rfind("dist-train: ", 0), 0u) << srun_.errors[0];
}

}  // namespace
}  // namespace dist_train
