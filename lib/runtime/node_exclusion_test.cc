// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/node_exclusion.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

// Records each call; `fail` names the call that fails.
struct FakeSlurm {
  std::string excluded = "";
  std::string fail;
  std::vector<std::string> calls;

  Status Result(const std::string& call) {
    calls.push_back(call);
    if (call.rfind(fail, 0) == 0 && !fail.empty())
      return Status::Unavailable(fail + " refused");
    return Status::OK();
  }
  RequeueOps Ops() {
    RequeueOps ops;
    ops.load_excluded = [this](uint32_t job, std::string* nodes) {
      *nodes = excluded;
      return Result("load " + std::to_string(job));
    };
    ops.requeue = [this](uint32_t job) {
      return Result("requeue " + std::to_string(job));
    };
    ops.set_excluded = [this](uint32_t job, const std::string& nodes) {
      return Result("set " + std::to_string(job) + " " + nodes);
    };
    return ops;
  }
};

using Calls = std::vector<std::string>;

TEST(NodeExclusionTest, RequeuesThenSetsTheGrownList) {
  FakeSlurm slurm;
  slurm.excluded = "node1";
  std::string excluded;
  ASSERT_TRUE(
      RequeueWithout(slurm.Ops(), 42, {"node2", "node4"}, &excluded).ok());
  EXPECT_EQ(excluded, "node[1-2,4]");
  EXPECT_EQ(slurm.calls,
            (Calls{"load 42", "requeue 42", "set 42 node[1-2,4]"}));
}

TEST(NodeExclusionTest, NoRequeueWhenTheJobCannotBeRead) {
  FakeSlurm slurm;
  slurm.fail = "load";
  std::string excluded;
  Status s = RequeueWithout(slurm.Ops(), 42, {"node2"}, &excluded);
  EXPECT_EQ(s.message(), "load refused");
  EXPECT_EQ(slurm.calls, Calls{"load 42"});
}

TEST(NodeExclusionTest, NoRequeueForAHostThatIsNotOne) {
  FakeSlurm slurm;
  std::string excluded;
  Status s = RequeueWithout(slurm.Ops(), 42, {"node[2-3]"}, &excluded);
  EXPECT_EQ(s.message(), "ExcNodeList: 'node[2-3]' is not one host name");
  EXPECT_EQ(slurm.calls, Calls{"load 42"});
}

TEST(NodeExclusionTest, RefusedRequeueChangesNothing) {
  FakeSlurm slurm;
  slurm.fail = "requeue";
  std::string excluded;
  Status s = RequeueWithout(slurm.Ops(), 42, {"node2"}, &excluded);
  EXPECT_EQ(s.message(), "requeue refused");
  EXPECT_EQ(slurm.calls, (Calls{"load 42", "requeue 42"}));
}

TEST(NodeExclusionTest, ARefusedExclusionSaysTheJobIsRequeuedWithoutIt) {
  FakeSlurm slurm;
  slurm.fail = "set";
  std::string excluded;
  Status s = RequeueWithout(slurm.Ops(), 42, {"node2"}, &excluded);
  EXPECT_EQ(s.message(),
            "set refused; job 42 is requeued without the exclusion");
  EXPECT_EQ(slurm.calls, (Calls{"load 42", "requeue 42", "set 42 node2"}));
}

TEST(NodeExclusionTest, SignalsOfTheEndingStepWaitUntilTheExclusion) {
  FakeSlurm slurm;
  bool blocked_while_setting = false;
  RequeueOps ops = slurm.Ops();
  ops.set_excluded = [&](uint32_t, const std::string&) {
    sigset_t now;
    sigprocmask(SIG_BLOCK, nullptr, &now);
    blocked_while_setting = sigismember(&now, SIGTERM) == 1 &&
                            sigismember(&now, SIGHUP) == 1 &&
                            sigismember(&now, SIGINT) == 1;
    return Status::OK();
  };
  std::string excluded;
  ASSERT_TRUE(RequeueWithout(ops, 42, {"node2"}, &excluded).ok());
  EXPECT_TRUE(blocked_while_setting);
  sigset_t after;
  sigprocmask(SIG_BLOCK, nullptr, &after);
  EXPECT_EQ(sigismember(&after, SIGTERM), 0);
}

TEST(NodeExclusionTest, BudgetFromTheEnvironment) {
  RequeueBudget b;
  ASSERT_TRUE(ReadRequeueBudget({{"SLURM_JOB_ID", "7"}}, &b).ok());
  EXPECT_EQ(b.job, 7u);
  EXPECT_EQ(b.restarts, 0u);
  EXPECT_EQ(b.max, kDefaultNodeRequeues);
  EXPECT_TRUE(b.left());
  ASSERT_TRUE(ReadRequeueBudget({{"SLURM_JOB_ID", "7"},
                                 {"SLURM_RESTART_COUNT", "2"},
                                 {"DT_MAX_REQUEUES", "2"}},
                                &b)
                  .ok());
  EXPECT_FALSE(b.left());
}

TEST(NodeExclusionTest, BudgetErrorsNameTheVariable) {
  RequeueBudget b;
  EXPECT_EQ(ReadRequeueBudget({}, &b).message(), "SLURM_JOB_ID is not set");
  EXPECT_EQ(ReadRequeueBudget(
                {{"SLURM_JOB_ID", "7"}, {"DT_MAX_REQUEUES", "three"}}, &b)
                .message(),
            "DT_MAX_REQUEUES='three' is not a count");
}

}  // namespace
}  // namespace dist_train
