// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/task_relay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "base/slurm_ids.h"
#include "relay/signal_relay.h"

namespace dist_train {
namespace {

// The paths that start no relay (the forking ones are the relay's own
// tests and the end-to-end preemption tests).
TEST(StartTaskRelayTest, NoRelayWhereNoneIsWanted) {
  RelayTask task;
  task.step_id = 3;
  PluginConfig off;
  off.signal_relay = false;
  MapEnvSink sink;
  StartTaskRelay(off, task, nullptr, sink);
  EXPECT_TRUE(sink.env.empty());
  RelayTask batch;
  batch.step_id = kBatchStepId;
  StartTaskRelay({}, batch, nullptr, sink);
  EXPECT_TRUE(sink.env.empty());
}

TEST(StartTaskRelayTest, LinuxprocNeedsNoRelayButTellsLaunchers) {
  PluginConfig cfg;
  cfg.proctrack = Proctrack::kLinuxproc;
  RelayTask task;
  task.step_id = 3;
  MapEnvSink sink;
  pid_t me = getpid();
  StartTaskRelay(cfg, task, nullptr, sink);
  ASSERT_EQ(getpid(), me);  // no fork: the test goes on in this process
  EXPECT_EQ(sink.env, (EnvMap{{kRelayVar, std::to_string(me)}}));
}

}  // namespace
}  // namespace dist_train
