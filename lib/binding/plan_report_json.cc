// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include <nlohmann/json.hpp>

#include "binding/plan_report.h"

namespace dist_train {

std::string PlanJson(const NodeModel& model, const BindPlan& plan) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const RankPlan& r : plan.ranks) {
    nlohmann::ordered_json nic = nullptr;
    if (r.nic >= 0) {
      nic = {{"pci", model.nics[r.nic].busid},
             {"names", model.nics[r.nic].names}};
    }
    list.push_back(
        {{"local_rank", r.local_rank},
         {"gpu", r.gpu < 0 ? nlohmann::ordered_json(nullptr)
                           : nlohmann::ordered_json(model.gpus[r.gpu].busid)},
         {"nic", nic},
         {"cpus", r.cpus},
         {"numa", r.numa}});
  }
  return list.dump(2) + "\n";
}

}  // namespace dist_train
