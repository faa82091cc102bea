// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/task_relay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>

#include "base/slurm_ids.h"
#include "relay/signal_relay.h"

namespace dist_train {
namespace {

class MapSink : public EnvSink {
 public:
  Status Set(const std::string& name, const std::string& value) override {
    env[name] = value;
    return Status::OK();
  }
  Status Unset(const std::string& name) override {
    env.erase(name);
    return Status::OK();
  }
  std::map<std::string, std::string> env;
};

// The paths that start no relay (the forking ones are the relay's own
// tests and the end-to-end preemption tests).
TEST(StartTaskRelayTest, NoRelayWhereNoneIsWanted) {
  RelayTask task;
  task.step_id = 3;
  PluginConfig off;
  off.signal_relay = false;
  MapSink sink;
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
  MapSink sink;
  pid_t me = getpid();
  StartTaskRelay(cfg, task, nullptr, sink);
  ASSERT_EQ(getpid(), me);  // no fork: the test goes on in this process
  EXPECT_EQ(
      sink.env,
      (std::map<std::string, std::string>{{kRelayVar, std::to_string(me)}}));
}

}  // namespace
}  // namespace dist_train
