// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The one table of GPU vendors: which PCI devices count as GPUs (read from
// hwloc by topology.cc) and which variables select the visible devices for
// the vendor's runtime (set by binding_env.cc, read back by the contract).

#ifndef DIST_TRAIN_LIB_BINDING_GPU_VENDOR_H_
#define DIST_TRAIN_LIB_BINDING_GPU_VENDOR_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dist_train {

// The last row's vendor id: any vendor not listed before it.
constexpr uint16_t kAnyPciVendor = 0;

struct GpuVendor {
  uint16_t pci_vendor;  // PCI vendor id, or kAnyPciVendor
  const char* name;
  // PCI classes (hwloc's class_id: class << 8 | subclass) that are GPUs when
  // this vendor makes them; the any-vendor row's classes count for all.
  std::vector<uint16_t> gpu_classes;
  // Each is set to the step's GPU list, in this order.
  std::vector<std::string> visible_devices_vars;
};

// Every known vendor, the any-vendor row last.
const std::vector<GpuVendor>& GpuVendors();

// The row of `pci_vendor`, or the any-vendor row.
const GpuVendor& GpuVendorOf(uint16_t pci_vendor);

// Whether a PCI device of this class and vendor is a GPU.
bool IsGpuDevice(uint16_t class_id, uint16_t pci_vendor);

// Every visible-devices variable of the table, each once, in table order.
const std::vector<std::string>& AllVisibleDevicesVars();

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_GPU_VENDOR_H_
