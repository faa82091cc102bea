// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/binding_env.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

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

// A rank with several GPUs sees exactly those, so that its own workers (a
// launcher's) or its devices 0..k-1 are its GPUs: Slurm's entries at their
// slots when Slurm lists the whole step, else their bus-order positions.
std::string OwnDevices(const BindPlan& plan, const RankPlan& r,
                       const std::string& slurm) {
  std::vector<std::string_view> listed = Split(slurm, ',');
  bool keep = !slurm.empty() && listed.size() == plan.step_gpus.size();
  std::string out;
  for (int slot : r.gpu_slots) {
    out += out.empty() ? "" : ",";
    out +=
        keep ? std::string(listed[slot]) : std::to_string(plan.step_gpus[slot]);
  }
  return out;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

void GpuEnv(const NodeModel& m, const BindPlan& plan, const RankPlan& r,
            const BindingEnvInputs& in, EnvAssignments* env) {
  // CUDA numbers devices by PCI bus only with this; the plan, NVML and
  // Slurm's GRES AutoDetect all use bus order.
  env->emplace_back("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  // A one-GPU rank: every GPU of the step stays visible (P2P/NVLink); the
  // rank's own GPU is device number DT_LOCAL_GPU, which is LOCAL_RANK unless
  // ranks outnumber GPUs. A rank with several GPUs sees just its own, its
  // first as device 0. Each variable the vendor's runtimes read gets the
  // same list.
  bool several = r.gpus.size() > 1;
  std::string visible =
      several ? OwnDevices(plan, r, in.slurm_cuda_visible_devices)
              : VisibleDevices(plan, in.slurm_cuda_visible_devices);
  for (const std::string& var :
       GpuVendorOf(m.gpus[r.gpu].vendor).visible_devices_vars) {
    env->emplace_back(var, visible);
  }
  env->emplace_back("DT_LOCAL_GPU", several ? "0" : std::to_string(r.gpu_slot));
  env->emplace_back("DT_GPU", m.gpus[r.gpu].busid);
  if (several) {
    std::vector<std::string> ids;
    for (int g : r.gpus) ids.push_back(m.gpus[g].busid);
    env->emplace_back("DT_GPUS", Joined(ids));
  }
}

// UCX's device word for a NIC ("" when it has neither verbs nor netdev).
std::string UcxDevice(const PciDevice& nic) {
  return !nic.verbs.empty() ? nic.verbs + ":1" : nic.netdev;
}

// NCCL's bootstrap and socket transport and Gloo use the best NIC's
// interface (one: Gloo takes the first it can, and NCCL's data path over
// several rails is RDMA, not sockets), when that interface can carry
// sockets here. NCCL matches names by prefix; "=" makes it exact.
void SocketEnv(const PciDevice& best, const std::vector<std::string>& usable,
               EnvAssignments* env) {
  if (best.netdev.empty() ||
      std::find(usable.begin(), usable.end(), best.netdev) == usable.end())
    return;
  env->emplace_back("NCCL_SOCKET_IFNAME", "=" + best.netdev);
  env->emplace_back("GLOO_SOCKET_IFNAME", best.netdev);
}

// DT_NIC and DT_NIC_PCI name the rank's best NIC; the list-valued
// variables (DT_NICS, UCX_NET_DEVICES, NCCL_IB_HCA) name all of its NICs,
// best first: a rank driving several GPUs drives their rails.
void NicEnv(const NodeModel& m, const RankPlan& r, const BindingEnvInputs& in,
            EnvAssignments* env) {
  std::vector<int> nics = r.nics.empty() ? std::vector<int>{r.nic} : r.nics;
  const PciDevice& best = m.nics[nics.front()];
  env->emplace_back("DT_NIC", NicName(best));
  env->emplace_back("DT_NIC_PCI", best.busid);
  std::vector<std::string> names, ucx, hcas;
  for (int i : nics) {
    const PciDevice& nic = m.nics[i];
    names.push_back(NicName(nic));
    if (!UcxDevice(nic).empty()) ucx.push_back(UcxDevice(nic));
    if (!nic.verbs.empty()) hcas.push_back(nic.verbs);
  }
  if (nics.size() > 1) env->emplace_back("DT_NICS", Joined(names));
  // UCX (MPI, UCC) uses every device unless told; give it the nearest ones.
  if (!ucx.empty()) env->emplace_back("UCX_NET_DEVICES", Joined(ucx));
  if (in.nccl_ib_hca && !hcas.empty()) {
    env->emplace_back("NCCL_IB_HCA", "=" + Joined(hcas));
  }
  SocketEnv(best, in.socket_interfaces, env);
}

}  // namespace

std::string NicName(const PciDevice& nic) {
  return !nic.verbs.empty()    ? nic.verbs
         : !nic.netdev.empty() ? nic.netdev
                               : nic.busid;
}

bool IsSocketInterfaceVar(const std::string& name) {
  return name == "NCCL_SOCKET_IFNAME" || name == "GLOO_SOCKET_IFNAME";
}

EnvAssignments BindingEnv(const NodeModel& model, const BindPlan& plan,
                          const RankPlan& rank, const BindingEnvInputs& in) {
  EnvAssignments env;
  if (in.parts.gpu && rank.gpu >= 0) GpuEnv(model, plan, rank, in, &env);
  if (in.parts.nic && rank.nic >= 0) {
    NicEnv(model, rank, in, &env);
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
