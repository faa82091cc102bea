// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Human and JSON renderings of a binding plan (dt-topo, the plugin's
// verbose table, golden tests).

#ifndef DIST_TRAIN_LIB_BINDING_PLAN_REPORT_H_
#define DIST_TRAIN_LIB_BINDING_PLAN_REPORT_H_

#include <string>

#include "binding/binding.h"
#include "binding/node_model.h"

namespace dist_train {

// One header line and one line per rank (a rank's several GPUs as bus ids
// joined by ",", its several NICs best first joined by "; "):
//   rank  gpu           nic                         cpus      numa
//   0     0000:1b:00.0  0000:1a:00.0 mlx5_0,ib0      0-13      0
std::string PlanTable(const NodeModel& model, const BindPlan& plan);

// A JSON list, one object per local rank: local_rank, gpu (bus id or null),
// nic (null or {pci, names}), cpus, numa; a rank with several GPUs or NICs
// also has gpus (bus ids) and nics (best first). Indented by 2,
// newline-terminated.
std::string PlanJson(const NodeModel& model, const BindPlan& plan);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_PLAN_REPORT_H_
