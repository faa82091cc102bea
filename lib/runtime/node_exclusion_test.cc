// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/node_exclusion.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

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

// The worker has other threads (NCCL's, Python's) whose masks the requeue
// cannot block: a SIGTERM that one of them takes still waits until the
// exclusion is set, then ends the process as it would have.
TEST(NodeExclusionTest, ASignalTakenByAnotherThreadWaitsTooThenArrives) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  pid_t child = fork();
  if (child == 0) {
    close(p[0]);
    std::atomic<bool> go{false};
    std::thread other([&] {  // started before: SIGTERM not blocked here
      while (!go) std::this_thread::yield();
      kill(getpid(), SIGTERM);
    });
    RequeueOps ops;
    ops.load_excluded = [](uint32_t, std::string* nodes) {
      return nodes->clear(), Status::OK();
    };
    ops.requeue = [&](uint32_t) {
      go = true;
      other.join();  // the signal has come, to whichever thread
      return Status::OK();
    };
    ops.set_excluded = [&](uint32_t, const std::string& nodes) {
      return write(p[1], nodes.data(), nodes.size()) > 0
                 ? Status::OK()
                 : Status::IOError("write");
    };
    std::string excluded;
    Status s = RequeueWithout(ops, 42, {"node2"}, &excluded);
    _exit(s.ok() ? 3 : 4);  // not reached: the SIGTERM ends it first
  }
  close(p[1]);
  char buf[16] = "";
  ssize_t n = read(p[0], buf, sizeof(buf) - 1);
  close(p[0]);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "node2")
      << "the exclusion was set before the signal ended the process";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      << "status " << status;
}

// In a child process: this test process may have claimed it already.
TEST(NodeExclusionTest, TheRequeueHistoryIsClaimedOncePerProcess) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    bool first = ClaimRequeueHistory(), second = ClaimRequeueHistory();
    _exit(first && !second ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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
