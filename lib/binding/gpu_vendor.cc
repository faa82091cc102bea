// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/gpu_vendor.h"

#include <algorithm>

namespace dist_train {
namespace {

bool Has(const std::vector<uint16_t>& classes, uint16_t class_id) {
  return std::find(classes.begin(), classes.end(), class_id) != classes.end();
}

}  // namespace

const std::vector<GpuVendor>& GpuVendors() {
  // 0x0300 (VGA) counts only for GPU vendors: a BMC's display (ASPEED) is
  // VGA too. CUDA_VISIBLE_DEVICES goes to every vendor because Slurm's GRES
  // sets it for any GPU and HIP reads it as well; ROCm's own runtime reads
  // only ROCR_VISIBLE_DEVICES.
  static const std::vector<GpuVendor> vendors = {
      {0x10de, "NVIDIA", {0x0300, 0x0302}, {"CUDA_VISIBLE_DEVICES"}},
      {0x1002,
       "AMD",
       {0x0300, 0x0380, 0x1200},
       {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}},
      // 3D controller (NVIDIA datacenter GPUs), display controller (AMD
      // MI50/MI250X), processing accelerator (AMD MI300A/X): whoever makes
      // them, they are not a BMC's.
      {kAnyPciVendor,
       "other",
       {0x0302, 0x0380, 0x1200},
       {"CUDA_VISIBLE_DEVICES"}},
  };
  return vendors;
}

const GpuVendor& GpuVendorOf(uint16_t pci_vendor) {
  const std::vector<GpuVendor>& vendors = GpuVendors();
  for (const GpuVendor& v : vendors) {
    if (v.pci_vendor == pci_vendor) return v;
  }
  return vendors.back();
}

bool IsGpuDevice(uint16_t class_id, uint16_t pci_vendor) {
  return Has(GpuVendorOf(pci_vendor).gpu_classes, class_id) ||
         Has(GpuVendors().back().gpu_classes, class_id);
}

const std::vector<std::string>& AllVisibleDevicesVars() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const GpuVendor& v : GpuVendors()) {
      for (const std::string& var : v.visible_devices_vars) {
        if (std::find(out.begin(), out.end(), var) == out.end())
          out.push_back(var);
      }
    }
    return out;
  }();
  return names;
}

}  // namespace dist_train
