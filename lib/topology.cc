// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "topology.h"

#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace dist_train {
namespace {

constexpr uint16_t kVendorNvidia = 0x10de, kVendorAmd = 0x1002,
                   kVendorHpeCray = 0x17db;

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using BitmapPtr = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

Status Open(const std::string& xml_path, TopologyPtr* out) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return Status::Internal("hwloc_topology_init failed");
  }
  TopologyPtr topo(raw);
  // The default filter drops every PCI and OS device, even from XML.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // Keep disallowed cores in the tree (with no usable PUs) so that core i
  // is still Slurm's core i; AllowedPus() filters them per use.
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  if (!xml_path.empty() && hwloc_topology_set_xml(raw, xml_path.c_str()) != 0) {
    return Status::InvalidArgument(
        xml_path + ": cannot use as hwloc XML: " + strerror(errno));
  }
  if (hwloc_topology_load(raw) != 0) {
    return Status::InvalidArgument(
        (xml_path.empty() ? std::string("this machine") : xml_path) +
        ": hwloc cannot load the topology: " + strerror(errno));
  }
  *out = std::move(topo);
  return Status::OK();
}

std::vector<int> Indexes(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  if (set == nullptr) return out;
  int i = hwloc_bitmap_first(set);
  while (i >= 0) {
    out.push_back(i);
    i = hwloc_bitmap_next(set, i);
  }
  return out;
}

// The object's cpuset restricted to the PUs we may use.
std::vector<int> AllowedPus(hwloc_topology_t topo, hwloc_const_cpuset_t set) {
  BitmapPtr b(hwloc_bitmap_dup(set));
  hwloc_bitmap_and(b.get(), b.get(), hwloc_topology_get_allowed_cpuset(topo));
  return Indexes(b.get());
}

std::string BusId(const hwloc_obj_t obj) {
  const auto& p = obj->attr->pcidev;
  char buf[32];
  snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%01x", p.domain, p.bus, p.dev,
           p.func);
  return buf;
}

// Walks ->parent ourselves: hwloc_get_common_ancestor_obj() crashes for I/O
// objects at different PCIe depths (hwloc 2.9; open-mpi/ompi#14458).
std::vector<uint64_t> PathToRoot(hwloc_obj_t obj) {
  std::vector<uint64_t> path;
  for (; obj != nullptr; obj = obj->parent) path.push_back(obj->gp_index);
  return path;
}

void AddOsDevices(hwloc_obj_t pci, PciDevice* dev) {
  for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE || c->name == nullptr) continue;
    hwloc_obj_osdev_type_t t = c->attr->osdev.type;
    if (t == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      dev->tier = NicTier::kRdma;
      if (dev->verbs.empty()) dev->verbs = c->name;
    }
    if (t == HWLOC_OBJ_OSDEV_NETWORK && dev->netdev.empty())
      dev->netdev = c->name;
    dev->names.emplace_back(c->name);
  }
}

NicTier TierOf(const PciDevice& dev) {
  uint16_t base = dev.class_id;
  if (dev.tier == NicTier::kRdma || base == 0x0207 || base == 0x0c06) {
    return NicTier::kRdma;
  }
  if (dev.vendor == kVendorHpeCray) return NicTier::kFabric;
  return NicTier::kManagement;
}

PciDevice Describe(hwloc_topology_t topo, hwloc_obj_t obj) {
  PciDevice dev;
  dev.busid = BusId(obj);
  dev.class_id = obj->attr->pcidev.class_id;
  dev.vendor = obj->attr->pcidev.vendor_id;
  dev.device = obj->attr->pcidev.device_id;
  dev.path = PathToRoot(obj);
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topo, obj);
  if (local != nullptr) {
    dev.local_pus = AllowedPus(topo, local->cpuset);
    dev.local_numa = Indexes(local->nodeset);
  }
  AddOsDevices(obj, &dev);
  return dev;
}

void ExtractCores(hwloc_topology_t topo, NodeModel* m) {
  int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_obj_type_t unit = ncores > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  hwloc_obj_t obj = nullptr;
  while ((obj = hwloc_get_next_obj_by_type(topo, unit, obj)) != nullptr) {
    m->cores.push_back(Core{AllowedPus(topo, obj->cpuset)});
  }
}

void ExtractNuma(hwloc_topology_t topo, NodeModel* m) {
  hwloc_obj_t obj = nullptr;
  while ((obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, obj)) !=
         nullptr) {
    m->numa.push_back(
        {static_cast<int>(obj->os_index), AllowedPus(topo, obj->cpuset)});
  }
}

void ExtractDevices(hwloc_topology_t topo, NodeModel* m) {
  hwloc_obj_t obj = nullptr;
  while ((obj = hwloc_get_next_pcidev(topo, obj)) != nullptr) {
    const auto& p = obj->attr->pcidev;
    if (IsGpuClass(p.class_id, p.vendor_id)) {
      m->gpus.push_back(Describe(topo, obj));
    } else if (IsNicClass(p.class_id)) {
      PciDevice nic = Describe(topo, obj);
      nic.tier = TierOf(nic);
      m->nics.push_back(std::move(nic));
    }
  }
  auto by_bus = [](const PciDevice& a, const PciDevice& b) {
    return a.busid < b.busid;
  };
  std::sort(m->gpus.begin(), m->gpus.end(), by_bus);
  std::sort(m->nics.begin(), m->nics.end(), by_bus);
}

}  // namespace

bool IsGpuClass(uint16_t class_id, uint16_t vendor) {
  switch (class_id) {
    case 0x0302:  // 3D controller (NVIDIA datacenter GPUs)
    case 0x0380:  // display controller (AMD MI50/MI250X)
    case 0x1200:  // processing accelerator (AMD MI300A/X)
      return true;
    case 0x0300:  // VGA: a GPU only from a GPU vendor, not a BMC's (ASPEED)
      return vendor == kVendorNvidia || vendor == kVendorAmd;
    default:
      return false;
  }
}

bool IsNicClass(uint16_t class_id) {
  return class_id == 0x0200 || class_id == 0x0207 || class_id == 0x0280 ||
         class_id == 0x0c06;
}

Status LoadNodeModel(const std::string& xml_path, NodeModel* model) {
  TopologyPtr topo;
  DT_RETURN_IF_ERROR(Open(xml_path, &topo));
  NodeModel m;
  ExtractCores(topo.get(), &m);
  ExtractNuma(topo.get(), &m);
  ExtractDevices(topo.get(), &m);
  if (AllPus(m).empty()) {
    return Status::InvalidArgument(
        (xml_path.empty() ? std::string("this machine") : xml_path) +
        ": topology has no usable PU");
  }
  *model = std::move(m);
  return Status::OK();
}

Status SaveTopologyXml(const std::string& path) {
  TopologyPtr topo;
  DT_RETURN_IF_ERROR(Open("", &topo));
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  if (hwloc_topology_export_xml(topo.get(), tmp.c_str(), 0) != 0) {
    return Status::IOError(tmp +
                           ": cannot write topology XML: " + strerror(errno));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return Status::IOError(path + ": " + strerror(err));
  }
  return Status::OK();
}

}  // namespace dist_train
