// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/gpu_vendor.h"

#include <gtest/gtest.h>

#include <vector>

namespace dist_train {
namespace {

struct DeviceCase {
  uint16_t class_id, vendor;
  bool gpu;
  const char* what;
};

TEST(GpuVendorTest, WhichPciDevicesAreGpus) {
  const std::vector<DeviceCase> cases = {
      {0x0302, 0x10de, true, "NVIDIA 3D controller (H100)"},
      {0x0300, 0x10de, true, "NVIDIA VGA"},
      {0x0380, 0x1002, true, "AMD display controller (MI250X)"},
      {0x1200, 0x1002, true, "AMD processing accelerator (MI300X)"},
      {0x0300, 0x1002, true, "AMD VGA"},
      {0x0300, 0x1a03, false, "ASPEED BMC VGA"},
      {0x0302, 0x8086, true, "3D controller of another vendor"},
      {0x0380, 0x8086, true, "display controller of another vendor"},
      {0x1200, 0x1da3, true, "accelerator of another vendor"},
      {0x0200, 0x10de, false, "NVIDIA Ethernet"},
      {0x0207, 0x15b3, false, "InfiniBand"},
  };
  for (const DeviceCase& c : cases) {
    EXPECT_EQ(IsGpuDevice(c.class_id, c.vendor), c.gpu) << c.what;
  }
}

struct VendorCase {
  uint16_t vendor;
  const char* name;
  std::vector<std::string> vars;
};

TEST(GpuVendorTest, VisibleDevicesVariablesPerVendor) {
  const std::vector<VendorCase> cases = {
      {0x10de, "NVIDIA", {"CUDA_VISIBLE_DEVICES"}},
      {0x1002, "AMD", {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}},
      {0x8086, "other", {"CUDA_VISIBLE_DEVICES"}},
      {kAnyPciVendor, "other", {"CUDA_VISIBLE_DEVICES"}},
  };
  for (const VendorCase& c : cases) {
    const GpuVendor& v = GpuVendorOf(c.vendor);
    EXPECT_STREQ(v.name, c.name) << c.vendor;
    EXPECT_EQ(v.visible_devices_vars, c.vars) << c.name;
  }
  EXPECT_EQ(AllVisibleDevicesVars(),
            (std::vector<std::string>{"CUDA_VISIBLE_DEVICES",
                                      "ROCR_VISIBLE_DEVICES"}));
}

TEST(GpuVendorTest, AnyVendorRowIsLastAndOnlyOnce) {
  const std::vector<GpuVendor>& vendors = GpuVendors();
  ASSERT_FALSE(vendors.empty());
  for (size_t i = 0; i < vendors.size(); ++i) {
    EXPECT_EQ(vendors[i].pci_vendor == kAnyPciVendor, i + 1 == vendors.size())
        << vendors[i].name;
    EXPECT_FALSE(vendors[i].visible_devices_vars.empty()) << vendors[i].name;
  }
}

}  // namespace
}  // namespace dist_train
