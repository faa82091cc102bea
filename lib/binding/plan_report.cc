// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/plan_report.h"

#include <algorithm>
#include <cstdio>

namespace dist_train {
namespace {

const char* TierName(NicTier t) {
  switch (t) {
    case NicTier::kRdma:
      return "rdma";
    case NicTier::kFabric:
      return "fabric";
    case NicTier::kManagement:
      break;
  }
  return "ethernet (no RDMA or fabric NIC)";
}

// hwloc's type names as words: "Package" -> "package", "NUMANode" ->
// "NUMA node"; our own kinds ("PCIe switch", "host bridge") stay.
std::string Readable(const std::string& kind) {
  if (kind == "NUMANode") return "NUMA node";
  if (kind == "PCIDev") return "PCI device";
  if (kind == "Package" || kind == "Group" || kind == "Die")
    return std::string(1, static_cast<char>(kind[0] + ('a' - 'A'))) +
           kind.substr(1);
  size_t cache = kind.rfind("Cache");  // L3Cache -> L3 cache
  if (cache != std::string::npos && cache + 5 == kind.size())
    return kind.substr(0, cache) + " cache";
  return kind;
}

// Where the NIC is from the rank: PCIe hops from its first GPU, or whether
// it is local to the rank's CPUs (what the planner compared).
std::string Distance(const NodeModel& m, const RankPlan& r,
                     const PciDevice& nic) {
  if (r.gpu >= 0) {
    const PciDevice& gpu = m.gpus[r.gpu];
    std::string kind = CommonAncestorKind(gpu, nic);
    std::string where = "GPU " + std::to_string(r.gpu) + " (" +
                        std::to_string(TreeDistance(gpu, nic)) + " hops)";
    if (kind.empty()) return "not connected to " + where;
    if (kind == "Machine") return "only the machine in common with " + where;
    return "same " + Readable(kind) + " as " + where;
  }
  if (r.cpus.empty() || nic.local_pus.empty()) return "no CPU locality known";
  return Overlaps(nic.local_pus, r.cpus) ? "local to its CPUs"
                                         : "not local to its CPUs";
}

// The other local ranks whose best NIC is the same one.
std::vector<int> SharedWith(const BindPlan& plan, const RankPlan& r) {
  std::vector<int> others;
  for (const RankPlan& o : plan.ranks) {
    if (o.local_rank != r.local_rank && o.nic == r.nic)
      others.push_back(static_cast<int>(o.local_rank));
  }
  return others;
}

}  // namespace

std::vector<int> RankGpus(const RankPlan& r) {
  if (!r.gpus.empty()) return r.gpus;
  if (r.gpu >= 0) return {r.gpu};
  return {};
}

std::string GpuModel(const NodeModel& model, const RankPlan& r) {
  if (r.gpu < 0) return "";
  const PciDevice& g = model.gpus[r.gpu];
  if (!g.model.empty()) return g.model;
  char ids[16];
  snprintf(ids, sizeof(ids), "%04x:%04x", g.vendor, g.device);
  return ids;
}

std::string NicReason(const NodeModel& model, const BindPlan& plan,
                      const RankPlan& r) {
  if (r.nic < 0) return "";
  const PciDevice& nic = model.nics[r.nic];
  std::string out =
      std::string(TierName(nic.tier)) + ", " + Distance(model, r, nic);
  std::vector<int> shared = SharedWith(plan, r);
  if (!shared.empty()) {
    out += std::string(", shared with local rank") +
           (shared.size() > 1 ? "s " : " ") + FormatIndexList(shared);
  }
  return out;
}

std::string BindingNote(const Status& planned, const BindPlan& plan) {
  if (!planned.ok())
    return "dist-train: warning: no topology binding: " + planned.message();
  std::string note;
  for (const std::string& w : plan.warnings)
    note +=
        (note.empty() ? "" : "\n") + std::string("dist-train: binding: ") + w;
  return note;
}

}  // namespace dist_train
