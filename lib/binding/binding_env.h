// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The environment one rank gets from its binding plan (pure). The plugin
// merges it into the env contract (user-set values still win) and sets the
// CPU affinity itself. docs/binding.md explains each variable and why NCCL
// is left to choose its own NICs by default.

#ifndef DIST_TRAIN_LIB_BINDING_BINDING_ENV_H_
#define DIST_TRAIN_LIB_BINDING_BINDING_ENV_H_

#include <string>
#include <vector>

#include "base/env.h"
#include "binding/binding.h"
#include "binding/node_model.h"

namespace dist_train {

struct BindingEnvInputs {
  BindParts parts;
  bool nccl_ib_hca = false;  // admin: also set NCCL_IB_HCA
  // The node's interfaces sockets can use (binding/interfaces.h): the
  // socket-interface variables name the rank's NIC only when its
  // interface is one of these. Empty: they are not set.
  std::vector<std::string> socket_interfaces;
  // CUDA_VISIBLE_DEVICES as Slurm set it for the step ("" when Slurm
  // manages no GPUs). Kept when it lists every GPU of the step, because
  // with device cgroups its indexes are local to the step.
  std::string slurm_cuda_visible_devices;
};

// The name users know a NIC by, as DT_NIC gives it: its RDMA device, else
// its network interface, else its bus id.
std::string NicName(const PciDevice& nic);

// NCCL_SOCKET_IFNAME or GLOO_SOCKET_IFNAME.
bool IsSocketInterfaceVar(const std::string& name);

EnvAssignments BindingEnv(const NodeModel& model, const BindPlan& plan,
                          const RankPlan& rank, const BindingEnvInputs& in);

// Binds the calling process to `cpus` (OS PU indexes); nothing for an empty
// list. The error names the CPUs and the reason.
Status ApplyCpuAffinity(const std::vector<int>& cpus);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_BINDING_ENV_H_
