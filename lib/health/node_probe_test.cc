// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/node_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "testing/testing_files.h"

namespace dist_train {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(NodeProbeTest, VisibleDeviceCountReadsTheList) {
  EXPECT_EQ(VisibleDeviceCount(nullptr), -1);
  for (const char* none : {"", "-1", "NoDevFiles"}) {
    std::string v = none;
    EXPECT_EQ(VisibleDeviceCount(&v), 0) << none;
  }
  std::string two = "0,3", uuid = "GPU-1a2b", gap = "1,,2";
  EXPECT_EQ(VisibleDeviceCount(&two), 2);
  EXPECT_EQ(VisibleDeviceCount(&uuid), 1);
  EXPECT_EQ(VisibleDeviceCount(&gap), 2);
}

TEST(NodeProbeTest, ReadLinkTakesStateAndSpeedFromSysfs) {
  testing_files::TempDir dir;
  std::string net = dir.path();
  mkdir((net + "/eth0").c_str(), 0755);
  Write(net + "/eth0/operstate", "up\n");
  Write(net + "/eth0/speed", "25000\n");
  mkdir((net + "/ib0").c_str(), 0755);
  Write(net + "/ib0/operstate", "down\n");
  Write(net + "/ib0/speed", "-1\n");
  mkdir((net + "/veth1").c_str(), 0755);
  Write(net + "/veth1/operstate", "unknown\n");

  NodeProbe p;
  ASSERT_TRUE(ReadLink(net, "eth0", &p).ok());
  EXPECT_EQ(p.nic, "eth0");
  EXPECT_TRUE(p.nic_up);
  EXPECT_EQ(p.nic_speed_mbps, 25000);
  ASSERT_TRUE(ReadLink(net, "ib0", &p).ok());
  EXPECT_FALSE(p.nic_up);
  EXPECT_EQ(p.nic_state, "down");
  EXPECT_EQ(p.nic_speed_mbps, -1);
  ASSERT_TRUE(ReadLink(net, "veth1", &p).ok());
  EXPECT_TRUE(p.nic_up);
  EXPECT_EQ(p.nic_speed_mbps, -1);

  NodeProbe q;
  Status s = ReadLink(net, "eth9", &q);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.message(), "interface eth9: no " + net + "/eth9/operstate");
  EXPECT_EQ(q.nic, "");
}

TEST(NodeProbeTest, NamedSocketInterfaceOnlyForOneExactName) {
  EXPECT_EQ(NamedSocketInterface(nullptr), "");
  std::string exact = "=eth0", plain = "ib0", excl = "^lo", many = "eth0,eth1";
  EXPECT_EQ(NamedSocketInterface(&exact), "eth0");
  EXPECT_EQ(NamedSocketInterface(&plain), "ib0");
  EXPECT_EQ(NamedSocketInterface(&excl), "");
  EXPECT_EQ(NamedSocketInterface(&many), "");
}

TEST(NodeProbeTest, RouteToLoopbackLeavesFromLo) {
  EXPECT_EQ(RouteInterface("127.0.0.1"), "lo");
  EXPECT_EQ(RouteInterface("no-such-host.invalid"), "");
}

TEST(NodeProbeTest, RatesArePositiveAndBounded) {
  double cpu = MeasureCpuRate(0.05), mem = MeasureMemoryBandwidth(0.05);
  EXPECT_GT(cpu, 0.01);
  EXPECT_LT(cpu, 1000);
  EXPECT_GT(mem, 0.01);
  EXPECT_LT(mem, 10000);
}

// In a child: the GPU count loads the CUDA libraries, which other tests
// of this process expect not to be loaded yet.
TEST(NodeProbeTest, ProbeNodeReadsTheTaskEnvironment) {
  pid_t pid = fork();
  if (pid == 0) {
    EnvMap env = {{"SLURMD_NODENAME", "node7"},
                  {"CUDA_VISIBLE_DEVICES", "0,1"},
                  {"MASTER_ADDR", "127.0.0.1"}};
    NodeProbe p = ProbeNode(env, 0.02);
    int bad = (p.host != "node7") | (p.gpus_expected != 2) << 1 |
              (p.gpus_found < -1) << 2 | (p.nic != "lo") << 3 |
              !(p.cpu_gflops > 0) << 4 | !(p.mem_gbps > 0) << 5;
    _exit(bad);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "bits: 1 host, 2 gpus expected, 4 gpus found, 8 nic, 16 cpu, 32 mem";
}

}  // namespace
}  // namespace dist_train
