// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/binding_env.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

#include "base/parse.h"
#include "binding/gpu_vendor.h"

namespace dist_train {
namespace {

std::string VisibleDevices(const BindPlan& plan, const std::string& slurm) {
  if (!slurm.empty() && Split(slurm, ',').size() == plan.step_gpus.size()) {
    return slurm;
  }
  std::string out;
  for (int g : plan.step_gpus)
    out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

void GpuEnv(const NodeModel& m, const BindPlan& plan, const RankPlan& r,
            const BindingEnvInputs& in, EnvAssignments* env) {
  // CUDA numbers devices by PCI bus only with this; the plan, NVML and
  // Slurm's GRES AutoDetect all use bus order.
  env->emplace_back("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  // Every GPU of the step stays visible (P2P/NVLink); the rank's own GPU is
  // device number DT_LOCAL_GPU, which is LOCAL_RANK unless ranks outnumber
  // GPUs. Each variable the vendor's runtimes read gets the same list.
  std::string visible = VisibleDevices(plan, in.slurm_cuda_visible_devices);
  for (const std::string& var :
       GpuVendorOf(m.gpus[r.gpu].vendor).visible_devices_vars) {
    env->emplace_back(var, visible);
  }
  env->emplace_back("DT_LOCAL_GPU", std::to_string(r.gpu_slot));
  env->emplace_back("DT_GPU", m.gpus[r.gpu].busid);
}

void NicEnv(const PciDevice& nic, bool nccl_ib_hca, EnvAssignments* env) {
  std::string name = !nic.verbs.empty()    ? nic.verbs
                     : !nic.netdev.empty() ? nic.netdev
                                           : nic.busid;
  env->emplace_back("DT_NIC", name);
  env->emplace_back("DT_NIC_PCI", nic.busid);
  // UCX (MPI, UCC) uses every device unless told; give it the nearest one.
  if (!nic.verbs.empty()) {
    env->emplace_back("UCX_NET_DEVICES", nic.verbs + ":1");
  } else if (!nic.netdev.empty()) {
    env->emplace_back("UCX_NET_DEVICES", nic.netdev);
  }
  if (nccl_ib_hca && !nic.verbs.empty()) {
    env->emplace_back("NCCL_IB_HCA", "=" + nic.verbs);
  }
}

}  // namespace

EnvAssignments BindingEnv(const NodeModel& model, const BindPlan& plan,
                          const RankPlan& rank, const BindingEnvInputs& in) {
  EnvAssignments env;
  if (in.parts.gpu && rank.gpu >= 0) GpuEnv(model, plan, rank, in, &env);
  if (in.parts.nic && rank.nic >= 0) {
    NicEnv(model.nics[rank.nic], in.nccl_ib_hca, &env);
  }
  if (in.parts.cpu && !rank.cpus.empty()) {
    size_t threads = rank.cores > 0 ? rank.cores : rank.cpus.size();
    env.emplace_back("OMP_NUM_THREADS", std::to_string(threads));
    env.emplace_back("DT_CPUS", FormatIndexList(rank.cpus));
  }
  return env;
}

Status ApplyCpuAffinity(const std::vector<int>& cpus) {
  if (cpus.empty()) return Status::OK();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) == 0) return Status::OK();
  return Status::IOError("cannot bind to CPUs " + FormatIndexList(cpus) + ": " +
                         strerror(errno));
}

}  // namespace dist_train
