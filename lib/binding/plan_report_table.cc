// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>

#include "binding/plan_report.h"

namespace dist_train {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

// A rank's GPUs' bus ids (comma-separated) or "-".
std::string BusIds(const NodeModel& m, const RankPlan& r) {
  std::vector<std::string> ids;
  for (int g : RankGpus(r)) ids.push_back(m.gpus[g].busid);
  return ids.empty() ? "-" : Join(ids);
}

// A rank's NICs, best first ("; "-separated: names are comma-separated).
std::string Nics(const NodeModel& m, const RankPlan& r) {
  std::vector<int> nics = r.nics;
  if (nics.empty() && r.nic >= 0) nics.push_back(r.nic);
  if (nics.empty()) return "-";
  std::string out;
  for (int i : nics) {
    const PciDevice& n = m.nics[i];
    out += (out.empty() ? "" : "; ") + n.busid +
           (n.names.empty() ? "" : " " + Join(n.names));
  }
  return out;
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

std::vector<std::string> Row(const NodeModel& m, const BindPlan& plan,
                             const RankPlan& r) {
  std::string rank = r.rank < 0 ? "-" : std::to_string(r.rank);
  std::string cpus = r.cpus.empty() ? "(not bound)" : FormatIndexList(r.cpus);
  return {rank,
          std::to_string(r.local_rank),
          OrDash(FormatIndexList(RankGpus(r))),
          OrDash(GpuModel(m, r)),
          BusIds(m, r),
          Nics(m, r),
          OrDash(NicReason(m, plan, r)),
          cpus,
          FormatIndexList(r.numa)};
}

}  // namespace

std::string PlanTable(const NodeModel& model, const BindPlan& plan) {
  std::vector<std::vector<std::string>> rows = {{"rank", "local", "gpu",
                                                 "model", "bus id", "nic",
                                                 "nic choice", "cpus", "numa"}};
  for (const RankPlan& r : plan.ranks) rows.push_back(Row(model, plan, r));
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size())
        line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace dist_train
