// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include <nlohmann/json.hpp>

#include "binding/plan_report.h"

namespace dist_train {
namespace {

nlohmann::ordered_json Nic(const NodeModel& model, int i) {
  return {{"pci", model.nics[i].busid}, {"names", model.nics[i].names}};
}

// A rank with several GPUs or NICs also lists them all ("gpus", "nics");
// a one-GPU, one-NIC rank keeps the shorter form.
void AddSets(const NodeModel& model, const RankPlan& r,
             nlohmann::ordered_json* row) {
  if (r.gpus.size() > 1) {
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (int g : r.gpus) gpus.push_back(model.gpus[g].busid);
    (*row)["gpus"] = gpus;
    (*row)["gpu_indexes"] = r.gpus;
  }
  if (r.nics.size() > 1) {
    nlohmann::ordered_json nics = nlohmann::ordered_json::array();
    for (int i : r.nics) nics.push_back(Nic(model, i));
    (*row)["nics"] = nics;
  }
}

nlohmann::ordered_json OrNull(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json(nullptr)
                   : nlohmann::ordered_json(s);
}

}  // namespace

std::string PlanJson(const NodeModel& model, const BindPlan& plan) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const RankPlan& r : plan.ranks) {
    nlohmann::ordered_json nic = nullptr;
    if (r.nic >= 0) nic = Nic(model, r.nic);
    nlohmann::ordered_json none = nullptr;
    nlohmann::ordered_json row = {
        {"rank", r.rank < 0 ? none : nlohmann::ordered_json(r.rank)},
        {"local_rank", r.local_rank},
        {"gpu",
         r.gpu < 0 ? none : nlohmann::ordered_json(model.gpus[r.gpu].busid)},
        {"gpu_index", r.gpu < 0 ? none : nlohmann::ordered_json(r.gpu)},
        {"gpu_model", OrNull(GpuModel(model, r))},
        {"nic", nic},
        {"nic_reason", OrNull(NicReason(model, plan, r))},
        {"cpus", r.cpus},
        {"numa", r.numa}};
    AddSets(model, r, &row);
    list.push_back(row);
  }
  // Names come from a topology file: bytes that are not UTF-8 become
  // U+FFFD instead of an exception.
  return list.dump(2, ' ', false,
                   nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace dist_train
