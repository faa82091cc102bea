// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/topology.h"

#include <fcntl.h>
#include <hwloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "binding/gpu_vendor.h"
#include "binding/root_files.h"

namespace dist_train {
namespace {

// Slingshot NICs: a fabric, not a management port, even without verbs.
constexpr uint16_t kVendorHpeCray = 0x17db;

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using BitmapPtr = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

// `xml`: a topology as XML, or nullptr to discover this machine. `what`
// names the source in errors.
Status Open(const std::string& what, const std::string* xml, TopologyPtr* out) {
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
  // The size counts the terminating NUL, as hwloc's own export does.
  if (xml != nullptr &&
      hwloc_topology_set_xmlbuffer(raw, xml->c_str(),
                                   static_cast<int>(xml->size() + 1)) != 0) {
    return Status::InvalidArgument(
        what + ": cannot use as hwloc XML: " + strerror(errno));
  }
  if (hwloc_topology_load(raw) != 0) {
    return Status::InvalidArgument(
        what + ": hwloc cannot load the topology: " + strerror(errno));
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
std::string KindOf(hwloc_obj_t obj) {
  if (obj->type == HWLOC_OBJ_BRIDGE) {
    return obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST
               ? "host bridge"
               : "PCIe switch";
  }
  return hwloc_obj_type_string(obj->type);
}

void PathToRoot(hwloc_obj_t obj, PciDevice* dev) {
  for (; obj != nullptr; obj = obj->parent) {
    dev->path.push_back(obj->gp_index);
    dev->path_kinds.push_back(KindOf(obj));
  }
}

// `text` as printable ASCII (anything else becomes '?'), at most 64
// characters: a topology file is input, and the name ends up in logs.
std::string Printable(const char* text) {
  std::string out;
  for (const char* p = text; *p != '\0' && out.size() < 64; ++p)
    out += (*p >= 0x20 && *p < 0x7f) ? *p : '?';
  return out;
}

// The device's product name: a GPU's OS device knows its model (CUDA,
// NVML, RSMI backends), else the PCI database's name, if either was
// recorded.
std::string ModelOf(hwloc_obj_t pci) {
  for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
    const char* m = hwloc_obj_get_info_by_name(c, "GPUModel");
    if (m != nullptr && *m != '\0') return Printable(m);
  }
  const char* name = hwloc_obj_get_info_by_name(pci, "PCIDevice");
  return name != nullptr ? Printable(name) : "";
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
  PathToRoot(obj, &dev);
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topo, obj);
  if (local != nullptr) {
    dev.local_pus = AllowedPus(topo, local->cpuset);
    dev.local_numa = Indexes(local->nodeset);
  }
  AddOsDevices(obj, &dev);
  dev.model = ModelOf(obj);
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

void ExtractPackages(hwloc_topology_t topo, NodeModel* m) {
  hwloc_obj_t obj = nullptr;
  while ((obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, obj)) !=
         nullptr) {
    m->packages.push_back(
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
  return IsGpuDevice(class_id, vendor);  // binding/gpu_vendor.cc's table
}

bool IsNicClass(uint16_t class_id) {
  return class_id == 0x0200 || class_id == 0x0207 || class_id == 0x0280 ||
         class_id == 0x0c06;
}

namespace {

Status Extract(const std::string& what, const TopologyPtr& topo,
               NodeModel* model) {
  NodeModel m;
  ExtractCores(topo.get(), &m);
  ExtractNuma(topo.get(), &m);
  ExtractPackages(topo.get(), &m);
  ExtractDevices(topo.get(), &m);
  if (AllPus(m).empty()) {
    return Status::InvalidArgument(what + ": topology has no usable PU");
  }
  *model = std::move(m);
  return Status::OK();
}

Status ModelFrom(const std::string& what, const std::string* xml,
                 NodeModel* model) {
  TopologyPtr topo;
  DT_RETURN_IF_ERROR(Open(what, xml, &topo));
  return Extract(what, topo, model);
}

std::string SignalName(int sig) {
  const char* name = strsignal(sig);
  return std::to_string(sig) + (name ? std::string(", ") + name : "");
}

// Parses `xml` in a child process; OK when the child got through (the
// parent may then parse the same bytes), an error when it crashed or hung.
// The child's exit status when hwloc refused the file without crashing
// (the parent then parses it again for hwloc's message).
constexpr int kChildParseError = 3;

Status ParseInChild(const std::string& path, const std::string& xml,
                    int timeout_s) {
  pid_t pid = fork();
  if (pid < 0) return ErrnoError(path, "cannot fork to parse it");
  if (pid == 0) {
    // hwloc's own complaints come again from the parent's parse; a crash
    // is expected here and leaves no core file.
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    NodeModel m;
    _exit(ModelFrom(path, &xml, &m).ok() ? 0 : kChildParseError);
  }
  int status = 0;
  timespec tick{0, 10 * 1000 * 1000};
  for (long waited = 0;; waited += 10) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR)
      return ErrnoError(path, "cannot wait for its parser");
    if (waited >= timeout_s * 1000L) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return Status::InvalidArgument("hwloc did not finish parsing " + path +
                                     " in " + std::to_string(timeout_s) + " s");
    }
    nanosleep(&tick, nullptr);
  }
  if (WIFSIGNALED(status)) {
    return Status::InvalidArgument("hwloc crashed parsing " + path +
                                   " (signal " + SignalName(WTERMSIG(status)) +
                                   ")");
  }
  // Any other end (a sanitizer's exit code after a crash, say) is a crash
  // too: the parent must not parse these bytes itself.
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0 && code != kChildParseError) {
    return Status::InvalidArgument("hwloc crashed parsing " + path +
                                   " (its parser exited with status " +
                                   std::to_string(code) + ")");
  }
  return Status::OK();
}

}  // namespace

Status LoadNodeModel(const std::string& xml_path, NodeModel* model) {
  if (xml_path.empty()) return ModelFrom("this machine", nullptr, model);
  std::string xml;
  DT_RETURN_IF_ERROR(ReadFileCapped(xml_path, &xml));
  return ModelFrom(xml_path, &xml, model);
}

Status LoadTrustedNodeModel(const std::string& xml_path, NodeModel* model) {
  std::string xml;
  DT_RETURN_IF_ERROR(ReadRootOnlyFile(xml_path, &xml));
  return ModelFrom(xml_path, &xml, model);
}

Status NodeModelFromXml(const std::string& what, const std::string& xml,
                        NodeModel* model) {
  return ModelFrom(what, &xml, model);
}

Status LoadNodeModelIsolated(const std::string& xml_path, NodeModel* model,
                             int timeout_s) {
  std::string xml;
  DT_RETURN_IF_ERROR(ReadFileCapped(xml_path, &xml));
  DT_RETURN_IF_ERROR(ParseInChild(xml_path, xml, timeout_s));
  return ModelFrom(xml_path, &xml, model);
}

namespace {

// The parts of two models that a damaged export would change.
bool SameShape(const NodeModel& a, const NodeModel& b) {
  return AllPus(a) == AllPus(b) && a.cores.size() == b.cores.size() &&
         a.numa.size() == b.numa.size() && a.gpus.size() == b.gpus.size() &&
         a.nics.size() == b.nics.size();
}

Status ExportChecked(const std::string& path, std::string* xml) {
  TopologyPtr topo;
  DT_RETURN_IF_ERROR(Open("this machine", nullptr, &topo));
  char* buf = nullptr;
  int len = 0;
  if (hwloc_topology_export_xmlbuffer(topo.get(), &buf, &len, 0) != 0 ||
      len <= 0) {
    return Status::IOError(
        path + ": hwloc cannot export the topology: " + strerror(errno));
  }
  xml->assign(buf, static_cast<size_t>(len - 1));  // len counts the NUL
  hwloc_free_xmlbuffer(topo.get(), buf);
  NodeModel live, reloaded;
  DT_RETURN_IF_ERROR(Extract("this machine", topo, &live));
  DT_RETURN_IF_ERROR(ModelFrom(path + " (as exported)", xml, &reloaded));
  if (!SameShape(live, reloaded)) {
    return Status::Internal(path +
                            ": hwloc's export does not load back into "
                            "the same topology; not saved");
  }
  return Status::OK();
}

}  // namespace

Status SaveTopologyXml(const std::string& path) {
  std::string xml;
  DT_RETURN_IF_ERROR(ExportChecked(path, &xml));
  return WriteFileAtomically(path, xml);
}

}  // namespace dist_train
