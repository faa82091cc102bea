// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "stepd.h"

#include <gtest/gtest.h>

#include "base/slurm_ids.h"
#include "contract/step_facts.h"
#include "fake_spank_host.h"
#include "state.h"
#include "task_arena.h"
#include "testing/testing_files.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace dist_train {
namespace {

const std::string kToken(64, 'a');

class StepdTest : public ::testing::Test {
 protected:
  // Task 1 (second on node1) of step 1000.3 on node[1-2], 2 tasks per node.
  void SetUp() override {
    host_ = FakeSpankHost();
    st_ = PluginState();
    st_.config.signal_relay = false;  // the relay forks: not here
    host_.items = {{S_JOB_ID, 1000},
                   {S_JOB_STEPID, 3},
                   {S_JOB_NNODES, 2},
                   {S_JOB_NODEID, 0},
                   {S_JOB_LOCAL_TASK_COUNT, 2},
                   {S_JOB_TOTAL_TASK_COUNT, 4},
                   {S_TASK_ID, 1},
                   {S_TASK_GLOBAL_ID, 1},
                   {S_STEP_CPUS_PER_TASK, 2}};
    host_.env = {{"SLURM_STEP_NODELIST", "node[1-2]"},
                 {"SLURM_JOB_NODELIST", "node[1-4]"},
                 {"SLURM_PROCID", "1"},
                 {"SLURM_LOCALID", "1"},
                 {"SLURM_NODEID", "0"},
                 {"SLURMD_NODENAME", "node1"},
                 {"DT_JOB_TOKEN", kToken}};
  }

  FakeSpankHost host_;
  PluginState st_;
};

TEST_F(StepdTest, TaskInitAppliesTheContractAndDropsStepFacts) {
  GiveOption(&st_, "on");
  host_.env[kStepFactsVar] = "job=1000,end=1767225600";
  st_.job_end_time = 1767225600;
  testing::internal::CaptureStderr();
  EXPECT_EQ(StepdTaskInit(host_, st_), 0);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(host_.env.count(kStepFactsVar), 0u);
  const std::map<std::string, std::string> want = {
      {"RANK", "1"},
      {"LOCAL_RANK", "1"},
      {"WORLD_SIZE", "4"},
      {"LOCAL_WORLD_SIZE", "2"},
      {"MASTER_ADDR", "node1"},
      {"DT_JOB_DEADLINE", "1767225600"},
      {"OMP_NUM_THREADS", "2"}};
  for (const auto& [name, value] : want) {
    ASSERT_TRUE(host_.env.count(name)) << name;
    EXPECT_EQ(host_.env.at(name), value) << name;
  }
  EXPECT_TRUE(host_.errors.empty());
  EXPECT_EQ(host_.end_time_rpcs + host_.node_addr_rpcs, 0);
}

// user_init, once per node before the tasks fork, parses the step's node
// list; every task_init then takes that first host instead of parsing again.
TEST_F(StepdTest, UserInitWorksOutTheFirstHostForEveryTask) {
  GiveOption(&st_, "mode=node");
  EXPECT_EQ(StepdUserInit(host_, st_), 0);
  EXPECT_EQ(st_.first_host_of, "node[1-2]");
  EXPECT_EQ(st_.first_host, "node1");
  st_.first_host = "from-user-init";
  EXPECT_EQ(StepdTaskInit(host_, st_), 0);
  EXPECT_EQ(host_.env.at("MASTER_ADDR"), "from-user-init");
}

// A node list user_init cannot parse is left to task_init, which fails the
// task naming it.
TEST_F(StepdTest, UserInitLeavesABadNodeListToTheTask) {
  GiveOption(&st_, "mode=node");
  host_.env["SLURM_STEP_NODELIST"] = "node[1-";
  EXPECT_EQ(StepdUserInit(host_, st_), 0);
  EXPECT_EQ(st_.first_host, "");
  testing::internal::CaptureStderr();
  EXPECT_EQ(StepdTaskInit(host_, st_), -1);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("SLURM_STEP_NODELIST"),
            std::string::npos);
}

// The plugin's operator new serves task_init from the arena (task_arena.h):
// every variable is set while it is on, and it is off again after.
TEST_F(StepdTest, TaskInitRunsInTheArenaAndTurnsItOff) {
  class Host : public FakeSpankHost {
   public:
    spank_err_t SetEnv(const char* name, const char* value,
                       int overwrite) override {
      (PluginTaskArena().on() ? in_arena : outside).push_back(name);
      return FakeSpankHost::SetEnv(name, value, overwrite);
    }
    std::vector<std::string> in_arena, outside;
  } host;
  static_cast<FakeSpankHost&>(host) = host_;
  GiveOption(&st_, "on");
  testing::internal::CaptureStderr();
  EXPECT_EQ(StepdTaskInit(host, st_), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_GT(host.in_arena.size(), 5u);
  EXPECT_EQ(host.outside, std::vector<std::string>{});
  EXPECT_FALSE(PluginTaskArena().on());
  EXPECT_EQ(host.env["RANK"], "1");
}

TEST_F(StepdTest, TaskInitFailsTheTaskWithTheDeferredError) {
  GiveOption(&st_, "on");
  host_.env[kStepFactsVar] = "job=1000,end=0";
  st_.deferred = Status::InvalidArgument(
      "--dist-train: unknown word 'bogus' (expected mode=, nproc=, ...)");
  testing::internal::CaptureStderr();
  EXPECT_EQ(StepdTaskInit(host_, st_), -1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "dist-train: error: --dist-train: unknown word 'bogus' "
            "(expected mode=, nproc=, ...)\n");
  // The items were never read: the log names task 0 of step 0.0.
  EXPECT_EQ(host_.errors,
            std::vector<std::string>{
                "dist-train: task 0 of step 0.0: --dist-train: unknown word "
                "'bogus' (expected mode=, nproc=, ...)"});
  EXPECT_EQ(host_.env.count(kStepFactsVar), 0u);
  EXPECT_EQ(host_.env.count("RANK"), 0u);
}

TEST_F(StepdTest, TaskInitFailsTheTaskWhenAnItemIsMissing) {
  struct Case {
    spank_item_t item;
    const char* name;
  } cases[] = {{S_JOB_ID, "S_JOB_ID"},
               {S_JOB_NNODES, "S_JOB_NNODES"},
               {S_TASK_ID, "S_TASK_ID"},
               {S_TASK_GLOBAL_ID, "S_TASK_GLOBAL_ID"}};
  for (const Case& c : cases) {
    SetUp();
    GiveOption(&st_, "on");
    host_.items.erase(c.item);
    testing::internal::CaptureStderr();
    EXPECT_EQ(StepdTaskInit(host_, st_), -1) << c.name;
    const std::string why = std::string("spank_get_item(") + c.name +
                            "): Item not available from this callback";
    EXPECT_EQ(testing::internal::GetCapturedStderr(),
              "dist-train: error: " + why + "\n");
    ASSERT_EQ(host_.errors.size(), 1u) << c.name;
    EXPECT_NE(host_.errors[0].find(": " + why), std::string::npos)
        << host_.errors[0];
    EXPECT_EQ(host_.env.count("RANK"), 0u) << c.name;
  }
}

TEST_F(StepdTest, TaskInitWithoutCpusPerTaskSetsNoOmpThreads) {
  GiveOption(&st_, "on");
  host_.items.erase(S_STEP_CPUS_PER_TASK);
  EXPECT_EQ(StepdTaskInit(host_, st_), 0);
  EXPECT_EQ(host_.env.count("OMP_NUM_THREADS"), 0u);
  EXPECT_EQ(host_.env.at("RANK"), "1");
}

TEST_F(StepdTest, TaskInitWithoutTheOptionOnlyDropsStepFacts) {
  host_.env[kStepFactsVar] = "job=1000,end=0";
  auto before = host_.env;
  before.erase(kStepFactsVar);
  EXPECT_EQ(StepdTaskInit(host_, st_), 0);
  EXPECT_EQ(host_.env, before);
}

TEST_F(StepdTest, TaskInitOutsideSlurmstepdDoesNothing) {
  GiveOption(&st_, "on");
  host_.context = S_CTX_LOCAL;
  host_.env[kStepFactsVar] = "job=1000,end=0";
  auto before = host_.env;
  EXPECT_EQ(StepdTaskInit(host_, st_), 0);
  EXPECT_EQ(host_.env, before);
}

// --- init_post_opt: srun's facts or exactly one lookup ---------------------

struct FactsCase {
  const char* name;
  AddrPolicy policy;
  const char* facts;  // DT_STEP_FACTS; nullptr = unset
  int end_rpcs, addr_rpcs;
  int64_t end_time;
  const char* addr;
  const char* info;  // the one log line, if any
};

TEST_F(StepdTest, InitPostOptUsesSrunsFactsForThisJobElseLooksUpOnce) {
  const FactsCase cases[] = {
      {"facts for this job", AddrPolicy::kHostname, "job=1000,end=1767225600",
       0, 0, 1767225600, "", nullptr},
      {"no time limit", AddrPolicy::kHostname, "job=1000,end=0", 0, 0, 0, "",
       nullptr},
      {"no facts (batch step)", AddrPolicy::kHostname, nullptr, 1, 0,
       1800000000, "", nullptr},
      {"facts of another job", AddrPolicy::kHostname, "job=999,end=5", 1, 0,
       1800000000, "", nullptr},
      {"malformed facts", AddrPolicy::kHostname, "job=1000", 1, 0, 1800000000,
       "",
       "dist-train: ignored: DT_STEP_FACTS='job=1000': end must be seconds "
       "since the epoch (0: no limit)"},
      {"nodeaddr: facts for the step's first node", AddrPolicy::kNodeAddr,
       "job=1000,end=5,node=node1,addr=10.9.9.1", 0, 0, 5, "10.9.9.1", nullptr},
      {"nodeaddr: facts for another node", AddrPolicy::kNodeAddr,
       "job=1000,end=5,node=node7,addr=10.9.9.7", 0, 1, 5, "10.0.0.1", nullptr},
      {"nodeaddr: facts without a node", AddrPolicy::kNodeAddr,
       "job=1000,end=5", 0, 1, 5, "10.0.0.1", nullptr},
      {"nodeaddr: facts of another job", AddrPolicy::kNodeAddr,
       "job=999,end=5,node=node1,addr=10.9.9.1", 1, 1, 1800000000, "10.0.0.1",
       nullptr},
      {"nodeaddr: malformed facts", AddrPolicy::kNodeAddr,
       "job=1000,end=5,node=node1", 1, 1, 1800000000, "10.0.0.1",
       "dist-train: ignored: DT_STEP_FACTS='job=1000,end=5,node=node1': node "
       "and addr go together"},
  };
  for (const FactsCase& c : cases) {
    SetUp();
    GiveOption(&st_, "on");
    st_.config.master_addr = c.policy;
    host_.end_times[1000] = 1800000000;
    host_.node_addrs = {{"node1", "10.0.0.1"}, {"node7", "10.0.0.7"}};
    if (c.facts) host_.env[kStepFactsVar] = c.facts;
    EXPECT_EQ(StepdInitPostOpt(host_, st_), 0) << c.name;
    EXPECT_TRUE(st_.deferred.ok()) << c.name << ": " << st_.deferred.ToString();
    EXPECT_EQ(host_.end_time_rpcs, c.end_rpcs) << c.name;
    EXPECT_EQ(host_.node_addr_rpcs, c.addr_rpcs) << c.name;
    EXPECT_EQ(st_.job_end_time, c.end_time) << c.name;
    EXPECT_EQ(st_.first_node_addr, c.addr) << c.name;
    std::vector<std::string> want_infos;
    if (c.info) want_infos.push_back(c.info);
    EXPECT_EQ(host_.infos, want_infos) << c.name;
  }
}

TEST_F(StepdTest, InitPostOptDefersAFailedNodeAddrLookup) {
  GiveOption(&st_, "on");
  st_.config.master_addr = AddrPolicy::kNodeAddr;
  host_.env[kStepFactsVar] = "job=1000,end=5";
  EXPECT_EQ(StepdInitPostOpt(host_, st_), 0);  // never fails slurmstepd
  EXPECT_EQ(st_.deferred.message(), "master_addr=nodeaddr: node node1 unknown");
  EXPECT_EQ(host_.node_addr_rpcs, 1);
}

TEST_F(StepdTest, InitPostOptLogsAFailedEndTimeLookupAndGoesOn) {
  GiveOption(&st_, "on");
  EXPECT_EQ(StepdInitPostOpt(host_, st_), 0);
  EXPECT_TRUE(st_.deferred.ok());
  EXPECT_EQ(st_.job_end_time, 0);
  EXPECT_EQ(host_.infos, std::vector<std::string>{"dist-train: job 1000 "
                                                  "unknown"});
}

TEST_F(StepdTest, InitPostOptBatchStepReadsTheJobsNodeList) {
  GiveOption(&st_, "on");
  st_.config.master_addr = AddrPolicy::kNodeAddr;
  host_.items[S_JOB_STEPID] = kBatchStepId;
  host_.env[kStepFactsVar] = "job=1000,end=5,node=node1,addr=10.9.9.1";
  host_.env["SLURM_JOB_NODELIST"] = "node[3-4]";
  host_.node_addrs = {{"node3", "10.0.0.3"}};
  EXPECT_EQ(StepdInitPostOpt(host_, st_), 0);
  EXPECT_EQ(st_.first_node_addr, "10.0.0.3");
  EXPECT_EQ(host_.node_addr_rpcs, 1);
}

TEST_F(StepdTest, TaskInitRefusesAnOverlongValueNamingItAndTheCap) {
  struct Case {
    const char* name;
    size_t size;
    const char* cap;
  } cases[] = {{"SLURM_PROCID", 65537, "65536"},
               {"CUDA_VISIBLE_DEVICES", 1 << 20, "65536"},
               {"SLURM_STEP_NODELIST", (1 << 20) + 1, "1048576"}};
  for (const Case& c : cases) {
    SetUp();
    GiveOption(&st_, "on");
    host_.env[c.name] = std::string(c.size, '1');
    testing::internal::CaptureStderr();
    EXPECT_EQ(StepdTaskInit(host_, st_), -1) << c.name;
    EXPECT_EQ(testing::internal::GetCapturedStderr(),
              std::string("dist-train: error: ") + c.name + " is longer than " +
                  c.cap + " bytes (the cap)\n");
    EXPECT_EQ(host_.env.count("RANK"), 0u) << c.name;
  }
}

// Before the cap this list went to libslurm, which aborted slurmstepd on
// malloc while expanding a billion host names.
TEST_F(StepdTest, InitPostOptRefusesANodeListBombBeforeAnyLookup) {
  GiveOption(&st_, "on");
  st_.config.master_addr = AddrPolicy::kNodeAddr;
  host_.env["SLURM_STEP_NODELIST"] = "a[0-999]b[0-999]c[0-999]";
  EXPECT_EQ(StepdInitPostOpt(host_, st_), 0);  // never fails slurmstepd
  EXPECT_EQ(st_.deferred.message(),
            "SLURM_STEP_NODELIST='a[0-999]b[0-999]c[0-999]' names more than "
            "65536 hosts (the cap)");
  EXPECT_EQ(host_.node_addr_rpcs, 0);
}

TEST_F(StepdTest, InitPostOptLooksUpNothingWhenNotAsked) {
  struct Case {
    const char* name;
    bool given;
    const char* options;
    Status deferred;
  } cases[] = {
      {"no --dist-train", false, "on", Status::OK()},
      {"--dist-train=off", true, "off", Status::OK()},
      {"deferred error", true, "on", Status::InvalidArgument("bad")},
  };
  for (const Case& c : cases) {
    SetUp();
    if (c.given) GiveOption(&st_, c.options);
    st_.config.master_addr = AddrPolicy::kNodeAddr;
    st_.deferred = c.deferred;
    EXPECT_EQ(StepdInitPostOpt(host_, st_), 0) << c.name;
    EXPECT_EQ(host_.end_time_rpcs + host_.node_addr_rpcs, 0) << c.name;
    EXPECT_EQ(st_.deferred.message(), c.deferred.message()) << c.name;
  }
}

// The plugin runs the site's preflight program with the task's wired
// environment; its exit status and the policy decide the task.
TEST_F(StepdTest, PreflightRunsBeforeTheProgramAndPolicyFailEndsTheTask) {
  testing_files::TempDir dir;
  std::string seen = dir.path() + "/seen";
  st_.config.preflight_program = dir.path() + "/dt-preflight";
  std::ofstream(st_.config.preflight_program)
      << "#!/bin/sh\necho \"$RANK $MASTER_ADDR $*\" > " << seen
      << "\nexit ${DT_TEST_EXIT:-3}\n";
  chmod(st_.config.preflight_program.c_str(), 0755);
  GiveOption(&st_, "preflight=30,preflight-policy=fail");
  EXPECT_EQ(StepdTaskInit(host_, st_), -1);
  std::ifstream in(seen);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "1 node1 --seconds 30 --policy fail --rank 1 --size 4 --probe 0 "
            "--identity slurm:1000.3:preflight\n");
  EXPECT_TRUE(host_.errors.empty());  // task 0 reports, not task 1
  ASSERT_FALSE(host_.verboses.empty());
  EXPECT_NE(host_.verboses.back().find("preflight-policy=fail: the program was "
                                       "not started"),
            std::string::npos);

  host_.env["DT_TEST_EXIT"] = "0";
  EXPECT_EQ(StepdTaskInit(host_, st_), 0);
  GiveOption(&st_, "preflight=30");  // warn: a failed check starts it
  host_.env["DT_TEST_EXIT"] = "3";
  EXPECT_EQ(StepdTaskInit(host_, st_), 0);
  host_.items[S_JOB_STEPID] = kBatchStepId;  // batch steps never run it
  GiveOption(&st_, "preflight=30,preflight-policy=fail");
  remove(seen.c_str());
  StepdTaskInit(host_, st_);
  EXPECT_FALSE(std::ifstream(seen).good());
}

}  // namespace
}  // namespace dist_train
