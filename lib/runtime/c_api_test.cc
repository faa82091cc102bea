// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The C API's errors, versions, environment and preemption calls. Its
// communicator: c_api_comm_test.cc; its checkpoint files:
// c_api_checkpoint_test.cc.

#include "dist_train/dist_train.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <ctime>
#include <stdexcept>
#include <string>
#include <thread>

#include "dist_train/status.h"
#include "runtime/c_api_internal.h"
#include "testing/testing_env.h"

namespace dist_train {
namespace {

using testing_env::ScopedEnv;

// Every code's name is the one Status::ToString prints.
TEST(CApiTest, CodeNamesAreStatusNames) {
  const Status statuses[] = {Status::OK(),
                             Status::InvalidArgument("m"),
                             Status::NotFound("m"),
                             Status::IOError("m"),
                             Status::Unavailable("m"),
                             Status::Timeout("m"),
                             Status::PermissionDenied("m"),
                             Status::Internal("m")};
  for (const Status& s : statuses) {
    const int code = static_cast<int>(s.code());
    const std::string text = s.ToString();
    EXPECT_EQ(dt_code_name(code),
              s.ok() ? text : text.substr(0, text.size() - 3))
        << code;
  }
  EXPECT_STREQ(dt_code_name(DT_INTERNAL + 1), "Unknown");
  EXPECT_STREQ(dt_code_name(-1), "Unknown");
}

TEST(CApiTest, VersionsAreTheLibrarys) {
  EXPECT_EQ(dt_api_version(), DT_API_VERSION);
  EXPECT_STREQ(dt_version(), DT_VERSION);
}

TEST(CApiTest, AFailureSetsThisThreadsLastErrorOnly) {
  EXPECT_EQ(dt_comm_barrier(nullptr), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_comm_barrier: comm is NULL");
  std::string other = "unset";
  std::thread([&other] { other = dt_last_error(); }).join();
  EXPECT_EQ(other, "");
  // A later success leaves it; the next failure replaces it.
  EXPECT_EQ(dt_dtype_size(DT_FLOAT64), 8u);
  EXPECT_STREQ(dt_last_error(), "dt_comm_barrier: comm is NULL");
  EXPECT_EQ(dt_env_read(nullptr), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_env_read: out is NULL");
}

TEST(CApiTest, ExceptionsBecomeInternalErrorsNamingTheFunction) {
  EXPECT_EQ(
      capi::Guard("dt_x", []() -> Status { throw std::runtime_error("boom"); }),
      DT_INTERNAL);
  EXPECT_STREQ(dt_last_error(), "dt_x: unexpected C++ exception: boom");
  EXPECT_EQ(capi::Guard("dt_y", []() -> Status { throw 7; }), DT_INTERNAL);
  EXPECT_STREQ(dt_last_error(),
               "dt_y: unexpected C++ exception: not a std::exception");
  EXPECT_EQ(capi::Guard("dt_z", [] { return Status::Timeout("late"); }),
            DT_TIMEOUT);
  EXPECT_STREQ(dt_last_error(), "late");
}

TEST(CApiTest, DtypeSizesAndUnknownDtypes) {
  EXPECT_EQ(dt_dtype_size(DT_FLOAT32), 4u);
  EXPECT_EQ(dt_dtype_size(DT_FLOAT64), 8u);
  EXPECT_EQ(dt_dtype_size(DT_INT32), 4u);
  EXPECT_EQ(dt_dtype_size(DT_INT64), 8u);
  EXPECT_EQ(dt_dtype_size(DT_BFLOAT16), 2u);
  EXPECT_EQ(dt_dtype_size(DT_FLOAT16), 2u);
  EXPECT_EQ(dt_dtype_size(6), 0u);
  EXPECT_EQ(dt_dtype_size(-1), 0u);
}

// ---- the environment ------------------------------------------------------

// A test's environment: none of the variables dt_env_read looks at.
class CApiEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : testing_env::kRankVars) env_.Unset(name);
  }
  ScopedEnv env_;
};

TEST_F(CApiEnvTest, UnsetIsMinusOneOrEmpty) {
  dt_env e;
  ASSERT_EQ(dt_env_read(&e), DT_OK) << dt_last_error();
  EXPECT_EQ(e.rank, -1);
  EXPECT_EQ(e.world_size, -1);
  EXPECT_EQ(e.local_rank, -1);
  EXPECT_EQ(e.local_world_size, -1);
  EXPECT_EQ(e.node_rank, -1);
  EXPECT_EQ(e.master_port, -1);
  EXPECT_STREQ(e.master_addr, "");
  EXPECT_EQ(e.job_id, -1);
  EXPECT_EQ(e.restart_count, -1);
  EXPECT_EQ(e.deadline, -1);
}

TEST_F(CApiEnvTest, TheContractsVariables) {
  for (auto [name, value] : {std::pair{"RANK", "3"},
                             {"WORLD_SIZE", "8"},
                             {"LOCAL_RANK", "1"},
                             {"LOCAL_WORLD_SIZE", "4"},
                             {"NODE_RANK", "0"},
                             {"MASTER_ADDR", "n1"},
                             {"MASTER_PORT", "29500"},
                             {"SLURM_JOB_ID", "42"},
                             {"SLURM_RESTART_COUNT", "2"},
                             {"DT_JOB_DEADLINE", "1900000000"},
                             // Slurm's are second to the contract's.
                             {"SLURM_PROCID", "7"},
                             {"SLURM_NTASKS", "9"}}) {
    env_.Set(name, value);
  }
  dt_env e;
  ASSERT_EQ(dt_env_read(&e), DT_OK) << dt_last_error();
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 4);
  EXPECT_EQ(e.node_rank, 0);
  EXPECT_STREQ(e.master_addr, "n1");
  EXPECT_EQ(e.master_port, 29500);
  EXPECT_EQ(e.job_id, 42);
  EXPECT_EQ(e.restart_count, 2);
  EXPECT_EQ(e.deadline, 1900000000);
}

TEST_F(CApiEnvTest, PlainSlurmsVariablesWhenTheContractsAreUnset) {
  for (auto [name, value] : {std::pair{"SLURM_PROCID", "5"},
                             {"SLURM_STEP_NUM_TASKS", "6"},
                             {"SLURM_NTASKS", "12"},
                             {"SLURM_LOCALID", "1"},
                             {"SLURM_NODEID", "2"},
                             {"SLURM_JOB_ID", "77"}}) {
    env_.Set(name, value);
  }
  dt_env e;
  ASSERT_EQ(dt_env_read(&e), DT_OK) << dt_last_error();
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 6);  // the step's, as the communicator takes it
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.node_rank, 2);
  EXPECT_EQ(e.job_id, 77);
  EXPECT_EQ(e.restart_count, 0);  // a job that was never requeued
  EXPECT_EQ(e.local_world_size, -1);
}

TEST_F(CApiEnvTest, ABadValueIsAnErrorNamingItsVariable) {
  struct Case {
    const char* name;
    const char* value;
    const char* error;
  };
  for (const Case& c : {
           Case{"RANK", "abc",
                "RANK='abc' is not an integer from 0 to 16777216"},
           Case{"SLURM_PROCID", "-1",
                "SLURM_PROCID='-1' is not an integer from 0 to 16777216"},
           Case{"WORLD_SIZE", "0",
                "WORLD_SIZE='0' is not an integer from 1 to 16777216"},
           Case{"LOCAL_RANK", "1x",
                "LOCAL_RANK='1x' is not an integer from 0 to 16777216"},
           Case{"MASTER_PORT", "65536",
                "MASTER_PORT='65536' is not an integer from 1 to 65535"},
           Case{"SLURM_JOB_ID", "0",
                "SLURM_JOB_ID='0' is not an integer from 1 to 4294967295"},
           Case{"SLURM_RESTART_COUNT", "two",
                "SLURM_RESTART_COUNT='two' is not a count"},
           Case{"DT_JOB_DEADLINE", "12x",
                "DT_JOB_DEADLINE='12x' is not seconds since the epoch"},
       }) {
    ScopedEnv one;
    one.Set(c.name, c.value);
    dt_env e;
    EXPECT_EQ(dt_env_read(&e), DT_INVALID_ARGUMENT) << c.name;
    EXPECT_STREQ(dt_last_error(), c.error);
  }
}

TEST_F(CApiEnvTest, AMasterAddrThatDoesNotFitIsRefusedNotCut) {
  dt_env e;
  env_.Set("MASTER_ADDR", std::string(255, 'a'));
  ASSERT_EQ(dt_env_read(&e), DT_OK) << dt_last_error();
  EXPECT_EQ(std::string(e.master_addr), std::string(255, 'a'));
  env_.Set("MASTER_ADDR", std::string(256, 'a'));
  EXPECT_EQ(dt_env_read(&e), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(),
               "MASTER_ADDR is 256 bytes long; dt_env.master_addr holds at "
               "most 255");
}

// ---- preemption -------------------------------------------------------------

// In a child (death test): the handler stays installed in the test binary
// otherwise.
TEST(CApiStopTest, TheStopSignalOnlySetsTheFlag) {
  EXPECT_EXIT(
      {
        if (dt_install_stop_handler(SIGUSR1) != DT_OK) _exit(2);
        if (dt_stop_requested() != 0) _exit(3);
        raise(SIGUSR1);
        if (dt_stop_requested() != 1) _exit(4);
        dt_clear_stop_request();
        _exit(dt_stop_requested() == 0 ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(CApiStopTest, SignalZeroTakesDtPreemptSignal) {
  EXPECT_EXIT(
      {
        setenv("DT_PREEMPT_SIGNAL", "USR2", 1);
        if (dt_install_stop_handler(0) != DT_OK) _exit(2);
        raise(SIGUSR2);
        _exit(dt_stop_requested() == 1 ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
  ScopedEnv env;
  env.Set("DT_PREEMPT_SIGNAL", "KILL");
  EXPECT_EQ(dt_install_stop_handler(0), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(),
               "DT_PREEMPT_SIGNAL='KILL' is not one of USR1, USR2, TERM, INT, "
               "HUP or URG");
}

TEST(CApiStopTest, ASignalThatCannotBeCaughtIsAnError) {
  EXPECT_EQ(dt_install_stop_handler(-3), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "signal -3 is not a signal number");
  EXPECT_EQ(dt_install_stop_handler(SIGKILL), DT_IO_ERROR);
  EXPECT_STREQ(dt_last_error(), "sigaction for signal 9: Invalid argument");
}

TEST(CApiStopTest, RequestAndClear) {
  dt_clear_stop_request();
  EXPECT_EQ(dt_stop_requested(), 0);
  dt_request_stop();
  EXPECT_EQ(dt_stop_requested(), 1);
  dt_clear_stop_request();
  EXPECT_EQ(dt_stop_requested(), 0);
  int stop = 0;
  EXPECT_EQ(dt_agree_to_stop(nullptr, &stop), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_agree_to_stop: comm is NULL");
}

TEST_F(CApiEnvTest, SecondsLeftFromTheDeadlineOutsideSlurm) {
  int64_t left = 0;
  EXPECT_EQ(dt_seconds_left(&left), DT_NOT_FOUND);
  EXPECT_STREQ(dt_last_error(),
               "no job time limit known (not in a Slurm job, or no limit)");
  env_.Set("DT_JOB_DEADLINE", std::to_string(time(nullptr) + 600));
  ASSERT_EQ(dt_seconds_left(&left), DT_OK) << dt_last_error();
  EXPECT_GE(left, 590);
  EXPECT_LE(left, 600);
  EXPECT_EQ(dt_seconds_left(nullptr), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_seconds_left: seconds is NULL");
}

TEST_F(CApiEnvTest, RequeueOutsideAJobAndPastItsMaximum) {
  EXPECT_EQ(dt_requeue(-1), DT_NOT_FOUND);
  EXPECT_STREQ(dt_last_error(),
               "SLURM_JOB_ID is not set: not inside a Slurm job");
  env_.Set("SLURM_JOB_ID", "5");
  env_.Set("SLURM_RESTART_COUNT", "3");
  EXPECT_EQ(dt_requeue(3), DT_PERMISSION_DENIED);
  EXPECT_STREQ(dt_last_error(), "job 5 was already requeued 3 times (limit 3)");
  env_.Set("DT_MAX_REQUEUES", "2");
  EXPECT_EQ(dt_requeue(-1), DT_PERMISSION_DENIED);
  EXPECT_STREQ(dt_last_error(), "job 5 was already requeued 3 times (limit 2)");
}

}  // namespace
}  // namespace dist_train
