// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/binding_env.h"

#include <gtest/gtest.h>

#include "binding/topology.h"

namespace dist_train {
namespace {

struct Env {
  NodeModel model;
  BindPlan plan;
};

Env PlanFor(const char* fixture, uint32_t ntasks) {
  Env e;
  EXPECT_TRUE(
      LoadNodeModel(std::string(DT_SOURCE_DIR) + "/tests/fixtures/" + fixture,
                    &e.model)
          .ok());
  BindRequest req;
  req.ntasks = ntasks;
  EXPECT_TRUE(PlanBinding(e.model, req, &e.plan).ok());
  return e;
}

EnvMap Map(const EnvAssignments& a) { return EnvMap(a.begin(), a.end()); }

TEST(BindingEnvTest, GpuNicAndCpuVariablesForOneRank) {
  Env e = PlanFor("dgx-h100-8gpu.xml", 8);
  EnvMap env =
      Map(BindingEnv(e.model, e.plan, e.plan.ranks[1], BindingEnvInputs()));
  EXPECT_EQ(env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1,2,3,4,5,6,7");
  EXPECT_EQ(env.count("ROCR_VISIBLE_DEVICES"), 0u) << "NVIDIA GPUs";
  EXPECT_EQ(env["DT_LOCAL_GPU"], "1");
  EXPECT_EQ(env["DT_GPU"], "0000:3a:00.0");
  EXPECT_EQ(env["DT_NIC"], "mlx5_3");
  EXPECT_EQ(env["DT_NIC_PCI"], "0000:3b:00.0");
  EXPECT_EQ(env["UCX_NET_DEVICES"], "mlx5_3:1");
  EXPECT_EQ(env.count("NCCL_IB_HCA"), 0u)
      << "NCCL chooses its own rails by default";
  EXPECT_EQ(env["OMP_NUM_THREADS"], "2");
  EXPECT_EQ(env["DT_CPUS"], "2-3,18-19");
}

TEST(BindingEnvTest, SlurmVisibleDevicesKeptWhenTheyListTheStep) {
  Env e = PlanFor("two-gpus-per-switch.xml", 4);
  BindingEnvInputs in;
  in.slurm_cuda_visible_devices = "0,1,2,3";
  EXPECT_EQ(Map(BindingEnv(e.model, e.plan, e.plan.ranks[2],
                           in))["CUDA_VISIBLE_DEVICES"],
            "0,1,2,3");
  in.slurm_cuda_visible_devices =
      "2";  // per-task binding would break set_device(LOCAL_RANK)
  EXPECT_EQ(Map(BindingEnv(e.model, e.plan, e.plan.ranks[2],
                           in))["CUDA_VISIBLE_DEVICES"],
            "0,1,2,3");
}

TEST(BindingEnvTest, PartsTurnOffAndNcclOptIn) {
  Env e = PlanFor("dgx-h100-8gpu.xml", 8);
  BindingEnvInputs in;
  in.parts.gpu = false;
  in.parts.cpu = false;
  in.nccl_ib_hca = true;
  EnvMap env = Map(BindingEnv(e.model, e.plan, e.plan.ranks[7], in));
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
  EXPECT_EQ(env.count("OMP_NUM_THREADS"), 0u);
  EXPECT_EQ(env["NCCL_IB_HCA"], "=mlx5_11");
  in.parts.nic = false;
  EXPECT_TRUE(BindingEnv(e.model, e.plan, e.plan.ranks[7], in).empty());
}

TEST(BindingEnvTest, SocketInterfaceVariablesNameTheNicsUsableInterface) {
  Env e = PlanFor("dgx-h100-8gpu.xml", 8);  // rank 1: mlx5_3, ibp60s0
  BindingEnvInputs in;
  in.socket_interfaces = {"eno3", "ibp60s0"};
  EnvMap env = Map(BindingEnv(e.model, e.plan, e.plan.ranks[1], in));
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "=ibp60s0") << "exact, not a prefix";
  EXPECT_EQ(env["GLOO_SOCKET_IFNAME"], "ibp60s0");
  // Another rank's NIC has no usable interface here (no IPoIB address).
  env = Map(BindingEnv(e.model, e.plan, e.plan.ranks[0], in));
  EXPECT_EQ(env["DT_NIC"], "mlx5_0");
  EXPECT_EQ(env.count("NCCL_SOCKET_IFNAME"), 0u);
  EXPECT_EQ(env.count("GLOO_SOCKET_IFNAME"), 0u);
  in.parts.nic = false;
  env = Map(BindingEnv(e.model, e.plan, e.plan.ranks[1], in));
  EXPECT_EQ(env.count("NCCL_SOCKET_IFNAME"), 0u) << "bind without nic";
  env = Map(BindingEnv(e.model, e.plan, e.plan.ranks[1], BindingEnvInputs()));
  EXPECT_EQ(env.count("GLOO_SOCKET_IFNAME"), 0u) << "no interface list";
}

TEST(BindingEnvTest, FabricNicWithoutVerbsUsesTheInterface) {
  Env e = PlanFor("no-locality-amd.xml", 2);
  EnvMap env =
      Map(BindingEnv(e.model, e.plan, e.plan.ranks[0], BindingEnvInputs()));
  EXPECT_EQ(env["DT_NIC"], "hsi0");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1") << "HIP reads it too";
  EXPECT_EQ(env["ROCR_VISIBLE_DEVICES"], "0,1") << "AMD GPUs";
  EXPECT_EQ(env["UCX_NET_DEVICES"], "hsi0");
  EXPECT_EQ(env["OMP_NUM_THREADS"], "2");
}

}  // namespace
}  // namespace dist_train
