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

std::vector<std::string> Row(const NodeModel& m, const RankPlan& r) {
  std::string gpu = r.gpu < 0 ? "-" : m.gpus[r.gpu].busid;
  std::string nic = "-";
  if (r.nic >= 0) {
    const PciDevice& n = m.nics[r.nic];
    nic = n.busid + (n.names.empty() ? "" : " " + Join(n.names));
  }
  std::string cpus = r.cpus.empty() ? "(not bound)" : FormatIndexList(r.cpus);
  return {std::to_string(r.local_rank), gpu, nic, cpus,
          FormatIndexList(r.numa)};
}

}  // namespace

std::string PlanTable(const NodeModel& model, const BindPlan& plan) {
  std::vector<std::vector<std::string>> rows = {
      {"rank", "gpu", "nic", "cpus", "numa"}};
  for (const RankPlan& r : plan.ranks) rows.push_back(Row(model, r));
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
