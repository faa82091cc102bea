// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/reserved_vars.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "binding/gpu_vendor.h"
#include "contract/contract.h"

namespace dist_train {
namespace {

constexpr char kSetByPlugin[] = "dist-train's plugin sets it for every step";

// Names reserved by their prefix, and why.
struct ReservedPrefix {
  const char* prefix;
  const char* why;
};

constexpr ReservedPrefix kReservedPrefixes[] = {
    {"DT_",
     "DT_* belong to dist-train (DT_JOB_TOKEN is the job's secret and must "
     "not be stored in the script)"},
    {"SLURM_", "SLURM_* are Slurm's"},
    {"SLURMD_", "SLURMD_* are Slurm's"},
    {"dt_", "dt_* are the generated script's own variables"},
};

// DT_* a job author tunes (docs/runtime.md): free in `env:`.
constexpr const char* kTunableDtVars[] = {"DT_TIMEOUT", "DT_SHM",
                                          "DT_SOCKET_ADDR"};

// Every variable the plugin exports whatever the user set: the contract's
// (torchrun's variables, PET_*) and every vendor's visible-devices variable.
// Not OMP_NUM_THREADS, UCX_NET_DEVICES, NCCL_IB_HCA, NCCL_SOCKET_IFNAME,
// GLOO_SOCKET_IFNAME or CUDA_DEVICE_ORDER:
// a value the user sets wins over the plugin's (docs/binding.md).
const std::vector<std::string>& SetByPlugin() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const std::string& n : ContractVarNames())
      if (n != "OMP_NUM_THREADS") v.push_back(n);
    for (const std::string& n : AllVisibleDevicesVars()) v.push_back(n);
    return v;
  }();
  return names;
}

bool IsTunable(const std::string& name) {
  return std::find(std::begin(kTunableDtVars), std::end(kTunableDtVars),
                   name) != std::end(kTunableDtVars);
}

}  // namespace

std::string ReservedVarReason(const std::string& name) {
  if (IsTunable(name)) return "";
  for (const ReservedPrefix& r : kReservedPrefixes) {
    if (name.rfind(r.prefix, 0) == 0) return r.why;
  }
  const std::vector<std::string>& plugin = SetByPlugin();
  if (std::find(plugin.begin(), plugin.end(), name) != plugin.end())
    return kSetByPlugin;
  return "";
}

}  // namespace dist_train
