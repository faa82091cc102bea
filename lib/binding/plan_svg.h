// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// A drawing of a node and its binding plan (dt-topo --svg): each package
// with its NUMA nodes, the PCIe switches (or host bridges) below it with
// their GPUs and NICs, and every rank's GPUs, NICs and CPU share in the
// rank's colour, with a legend.

#ifndef DIST_TRAIN_LIB_BINDING_PLAN_SVG_H_
#define DIST_TRAIN_LIB_BINDING_PLAN_SVG_H_

#include <string>

#include "binding/binding.h"
#include "binding/node_model.h"

namespace dist_train {

// A standalone SVG document. Elements carry classes that tests and style
// sheets can select: rect.package, rect.numa, rect.switch, rect.gpu
// (data-gpu, data-rank when in a plan), rect.nic (data-ranks), rect.cpus
// (one per rank and NUMA node it has CPUs in), g.legend-row (one per
// rank). `title` is drawn at the top (escaped). Text from the topology is
// escaped and clipped to fit its box.
std::string PlanSvg(const NodeModel& model, const BindPlan& plan,
                    const std::string& title);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_PLAN_SVG_H_
