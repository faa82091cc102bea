// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// What the binding planner needs to know about a node, extracted once from
// an hwloc topology (lib/topology.cc) so the planner itself is pure and
// independent of hwloc. GPUs and NICs are identified by PCI position, never
// by OS device name (names differ between identical nodes).

#ifndef DIST_TRAIN_LIB_BINDING_NODE_MODEL_H_
#define DIST_TRAIN_LIB_BINDING_NODE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dist_train {

struct Core {
  // Allowed PU OS indexes of this core (hyperthreads); empty when all of its
  // PUs are disallowed. Cores are kept in topology (logical) order, which is
  // also Slurm's core numbering on the node.
  std::vector<int> pus;
};

struct NumaNode {
  int os_index = 0;
  std::vector<int> pus;  // allowed PUs local to it
};

struct Package {  // a CPU socket
  int os_index = 0;
  std::vector<int> pus;  // its allowed PUs
};

// How good a network adapter is for training traffic.
enum class NicTier {
  kRdma = 0,       // InfiniBand / RoCE / EFA: has an OpenFabrics device
  kFabric = 1,     // high-speed Ethernet fabric without verbs (Slingshot)
  kManagement = 2  // any other Ethernet: used only when nothing better exists
};

struct PciDevice {
  std::string busid;  // "dddd:bb:dd.f"
  uint16_t class_id = 0, vendor = 0, device = 0;
  std::vector<std::string> names;  // OS device names (mlx5_0, ib0, hsi0...)
  // Product name as the topology records it (hwloc's GPUModel, else the
  // PCI database's device name), printable ASCII, at most 64 characters;
  // empty when the topology has none.
  std::string model;
  std::string verbs;   // its OpenFabrics (RDMA) device name, e.g. mlx5_0
  std::string netdev;  // its first network interface name, e.g. ib0
  NicTier tier = NicTier::kManagement;  // NICs only
  // Topology objects from the device up to the root (hwloc gp_index),
  // nearest first; the tree distance of two devices is the number of hops
  // to their first common entry.
  std::vector<uint64_t> path;
  // What each entry of `path` is: "PCIe switch", "host bridge", or the
  // hwloc type of a non-I/O object ("Package", "Group", "Machine"...).
  std::vector<std::string> path_kinds;
  std::vector<int> local_pus;   // PUs of its first non-I/O ancestor
  std::vector<int> local_numa;  // NUMA nodes of that ancestor (OS indexes)
};

struct NodeModel {
  std::vector<Core> cores;  // every core, topology order
  std::vector<NumaNode> numa;
  std::vector<Package> packages;  // empty when the topology names none
  std::vector<PciDevice> gpus;    // sorted by bus id
  std::vector<PciDevice> nics;    // sorted by bus id
};

// Number of hops between two devices through their first common ancestor.
int TreeDistance(const PciDevice& a, const PciDevice& b);

// What the first common ancestor of two devices is (an entry of
// PciDevice::path_kinds, e.g. "PCIe switch"); "" when they have none or the
// model does not know.
std::string CommonAncestorKind(const PciDevice& a, const PciDevice& b);

// The common elements of two ascending index lists (PUs, NUMA nodes).
std::vector<int> Intersect(const std::vector<int>& a,
                           const std::vector<int>& b);

// Whether two ascending index lists share an element.
bool Overlaps(const std::vector<int>& a, const std::vector<int>& b);

// All allowed PUs of the node, ascending.
std::vector<int> AllPus(const NodeModel& model);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_NODE_MODEL_H_
