// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/runtime_env.h"

#include <gtest/gtest.h>

#include "contract/port.h"

namespace dist_train {
namespace {

Options Resolve(const EnvMap& env, Options in = Options()) {
  Options out;
  Status s = ResolveOptions(in, env, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

std::string Error(const EnvMap& env, Options in = Options()) {
  Options out;
  return ResolveOptions(in, env, &out).message();
}

TEST(RuntimeEnvTest, DistTrainAndTorchrunContract) {
  Options o = Resolve({{"RANK", "3"},
                       {"WORLD_SIZE", "8"},
                       {"MASTER_ADDR", "node1"},
                       {"MASTER_PORT", "29500"},
                       {"SLURM_JOB_ID", "77"},
                       {"SLURM_STEP_ID", "2"},
                       {"DT_JOB_TOKEN", std::string(64, 'c')},
                       {"DT_TIMEOUT", "2.5"},
                       {"DT_SOCKET_ADDR", "10.0.0.7"}});
  EXPECT_EQ(o.local_addr, "10.0.0.7");
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.world_size, 8);
  EXPECT_EQ(o.master_addr, "node1");
  EXPECT_EQ(o.master_port, 29500);
  EXPECT_EQ(o.job_token, std::string(64, 'c'));
  EXPECT_EQ(o.job_identity, "slurm:77.2");
  EXPECT_EQ(o.timeout_seconds, 2.5);
}

TEST(RuntimeEnvTest, PlainSlurmWithoutThePlugin) {
  Options o = Resolve({{"SLURM_PROCID", "1"},
                       {"SLURM_STEP_NUM_TASKS", "4"},
                       {"SLURM_NTASKS", "9"},
                       {"SLURM_STEP_NODELIST", "gpu[3-4]"},
                       {"SLURM_JOB_ID", "1234"},
                       {"SLURM_STEP_ID", "0"}});
  EXPECT_EQ(o.rank, 1);
  EXPECT_EQ(o.world_size, 4) << "the step's tasks, not the job's";
  EXPECT_EQ(o.master_addr, "gpu3");
  EXPECT_EQ(o.master_port, DerivePort(1234, 0, 20000, 32767))
      << "the plugin's port";
}

TEST(RuntimeEnvTest, BatchScriptOf2605WithNegativeStepId) {
  // 26.05 exports SLURM_STEP_ID=-5 in the batch script; before, none.
  Options o = Resolve({{"SLURM_PROCID", "0"},
                       {"SLURM_NTASKS", "1"},
                       {"SLURM_STEP_NODELIST", "gpu3"},
                       {"SLURM_JOB_ID", "1234"},
                       {"SLURM_STEP_ID", "-5"}});
  EXPECT_EQ(o.master_port, DerivePort(1234, kBatchStepId, 20000, 32767));
  Options unset = Resolve({{"SLURM_PROCID", "0"},
                           {"SLURM_NTASKS", "1"},
                           {"SLURM_STEP_NODELIST", "gpu3"},
                           {"SLURM_JOB_ID", "1234"}});
  EXPECT_EQ(unset.master_port, o.master_port);
}

TEST(RuntimeEnvTest, ABatchScriptOfAManyTaskJobIsNoRank) {
  // Forgetting srun: rank 0 of SLURM_NTASKS would wait for the timeout.
  EnvMap batch = {{"SLURM_PROCID", "0"},           {"SLURM_NTASKS", "4"},
                  {"SLURM_STEP_NODELIST", "gpu3"}, {"SLURM_JOB_ID", "1234"},
                  {"MASTER_ADDR", "gpu3"},         {"MASTER_PORT", "29500"}};
  Options o;
  Status s = ResolveOptions(Options(), batch, &o);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "RANK is not set: this is job 1234's batch script, not one of its "
            "4 tasks; start the workers with srun");
  batch["SLURM_STEP_NUM_TASKS"] = "4";  // an srun step: plain Slurm works
  EXPECT_EQ(Resolve(batch).world_size, 4);
  batch.erase("SLURM_STEP_NUM_TASKS");
  Options explicit_rank;
  explicit_rank.rank = 0;
  explicit_rank.world_size = 1;
  EXPECT_EQ(Resolve(batch, explicit_rank).world_size, 1);
}

TEST(RuntimeEnvTest, ExplicitOptionsWin) {
  Options in;
  in.rank = 0;
  in.world_size = 1;
  in.master_addr = "127.0.0.1";
  in.master_port = 5000;
  in.job_identity = "mine";
  Options o = Resolve({{"RANK", "5"}, {"MASTER_PORT", "x"}}, in);
  EXPECT_EQ(o.rank, 0);
  EXPECT_EQ(o.master_port, 5000);
  EXPECT_EQ(o.job_identity, "mine");
}

TEST(RuntimeEnvTest, ErrorsNameTheVariable) {
  EXPECT_EQ(Error({}),
            "RANK is not set: start the workers with srun --dist-train, dt-run "
            "or torchrun, or set Options::rank");
  EXPECT_EQ(Error({{"RANK", "0"}}),
            "WORLD_SIZE is not set: start the workers with srun --dist-train, "
            "dt-run or torchrun, or set Options::world_size");
  EXPECT_EQ(Error({{"RANK", "x"}}),
            "RANK='x' is not an integer from 0 to 16777216");
  EXPECT_EQ(Error({{"RANK", "4"}, {"WORLD_SIZE", "4"}}),
            "rank 4 is not below world size 4");
  EXPECT_EQ(Error({{"RANK", "0"}, {"WORLD_SIZE", "2"}}),
            "MASTER_ADDR is not set (nor SLURM_STEP_NODELIST)");
  EXPECT_EQ(Error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}),
            "MASTER_PORT is not set (nor SLURM_JOB_ID)");
  EXPECT_EQ(Error({{"RANK", "0"},
                   {"WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "h"},
                   {"MASTER_PORT", "70000"}}),
            "MASTER_PORT='70000' is not an integer from 1 to 65535");
  EXPECT_EQ(Error({{"RANK", "0"},
                   {"WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "h"},
                   {"SLURM_JOB_ID", "9"},
                   {"SLURM_STEP_ID", "-99"}}),
            "SLURM_STEP_ID='-99' is not a Slurm step id");
  EXPECT_EQ(Error({{"RANK", "0"},
                   {"WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "h"},
                   {"MASTER_PORT", "1"},
                   {"DT_JOB_TOKEN", "abc"}}),
            "DT_JOB_TOKEN must be 64 lowercase hex digits (got 3 characters)");
  EXPECT_EQ(Error({{"RANK", "0"},
                   {"WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "h"},
                   {"MASTER_PORT", "1"},
                   {"DT_TIMEOUT", "0"}}),
            "DT_TIMEOUT='0' is not a positive number of seconds");
  EXPECT_EQ(Error({{"RANK", "0"},
                   {"WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "h"},
                   {"MASTER_PORT", "1"},
                   {"DT_SOCKET_ADDR", "eth0"}}),
            "DT_SOCKET_ADDR='eth0' is not an IPv4 address");
}

TEST(RuntimeEnvTest, ErrorsNameTheVariableThatWasRead) {
  const EnvMap ready = {{"RANK", "0"},
                        {"WORLD_SIZE", "2"},
                        {"MASTER_ADDR", "h"},
                        {"MASTER_PORT", "1"}};
  auto with = [&ready](const char* name, const char* value) {
    EnvMap env = ready;
    env[name] = value;
    return env;
  };
  EXPECT_EQ(Error({{"SLURM_PROCID", "-1"}}),
            "SLURM_PROCID='-1' is not an integer from 0 to 16777216");
  EXPECT_EQ(Error({{"RANK", "0"}, {"SLURM_STEP_NUM_TASKS", "0"}}),
            "SLURM_STEP_NUM_TASKS='0' is not an integer from 1 to 16777216");
  EXPECT_EQ(Error({{"RANK", "0"},
                   {"WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "h"},
                   {"SLURM_JOB_ID", "12x"}}),
            "SLURM_JOB_ID='12x' is not an integer from 0 to 4294967295");
  for (const char* bad : {"inf", "nan", " 2", "+2", "0x10", "2s", ""}) {
    EXPECT_EQ(Error(with("DT_TIMEOUT", bad)),
              std::string("DT_TIMEOUT='") + bad +
                  "' is not a positive number of seconds");
  }
  EXPECT_EQ(Error(with("DT_SOCKET_ADDR", "")),
            "DT_SOCKET_ADDR='' is not an IPv4 address");
  EXPECT_EQ(Resolve(with("DT_TIMEOUT", "1e1")).timeout_seconds, 10);
}

// A deadline that far out would overflow into the past and end every wait
// at once.
TEST(RuntimeEnvTest, ATimeoutPastAYearIsCutToAYear) {
  const double year = 365.0 * 24 * 3600;
  const struct {
    const char* value;
    double seconds;
  } cases[] = {
      {"1e10", year}, {"9.3e9", year}, {"1e300", year}, {"31535999", 31535999}};
  for (const auto& c : cases) {
    EnvMap env = {{"RANK", "0"},
                  {"WORLD_SIZE", "2"},
                  {"MASTER_ADDR", "h"},
                  {"MASTER_PORT", "1"},
                  {"DT_TIMEOUT", c.value}};
    EXPECT_EQ(Resolve(env).timeout_seconds, c.seconds) << c.value;
  }
  Options explicit_timeout;
  explicit_timeout.timeout_seconds = 1e12;
  EXPECT_EQ(Resolve({{"RANK", "0"},
                     {"WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "h"},
                     {"MASTER_PORT", "1"}},
                    explicit_timeout)
                .timeout_seconds,
            year);
}

TEST(RuntimeEnvTest, KubeflowV1WorldSizeCountsPods) {
  EXPECT_EQ(
      Error({{"RANK", "1"},
             {"WORLD_SIZE", "2"},
             {"PET_NPROC_PER_NODE", "4"},
             {"MASTER_ADDR", "m"},
             {"MASTER_PORT", "23456"}}),
      "WORLD_SIZE=2 counts Kubeflow pods, but PET_NPROC_PER_NODE=4 asks for "
      "several processes per pod: start them with torchrun or dt-run");
  // Under torchrun inside the pod (LOCAL_RANK set) WORLD_SIZE is processes.
  EXPECT_EQ(Resolve({{"RANK", "5"},
                     {"WORLD_SIZE", "8"},
                     {"LOCAL_RANK", "1"},
                     {"PET_NPROC_PER_NODE", "4"},
                     {"MASTER_ADDR", "m"},
                     {"MASTER_PORT", "23456"}})
                .world_size,
            8);
  EXPECT_EQ(Resolve({{"RANK", "0"},
                     {"WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "m"},
                     {"MASTER_PORT", "23456"}})
                .job_identity,
            "master:m:23456");
}

}  // namespace
}  // namespace dist_train
