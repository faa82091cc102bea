// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Human and JSON renderings of a binding plan (dt-topo, the plugin's
// verbose table, golden tests).

#ifndef DIST_TRAIN_LIB_BINDING_PLAN_REPORT_H_
#define DIST_TRAIN_LIB_BINDING_PLAN_REPORT_H_

#include <string>
#include <vector>

#include "binding/binding.h"
#include "binding/node_model.h"

namespace dist_train {

// One header line and one line per rank: its global rank ("-" when
// unknown) and local rank, its GPUs as node indexes (bus order, which is
// nvidia-smi's) with the first one's model and the bus ids (several joined
// by ","), its NICs best first (joined by "; "), why the first NIC, its
// CPUs and NUMA nodes:
//   rank  local  gpu  model     bus id        nic                      nic
//   choice                                cpus       numa 8     0      0 Tesla
//   T4  0000:1a:00.0  0000:1b:00.0 ib0,mlx5_0  rdma, same PCIe switch as GPU 0
//   (4 hops)  0-1,16-17  0
std::string PlanTable(const NodeModel& model, const BindPlan& plan);

// A JSON list, one object per local rank: rank (global, or null),
// local_rank, gpu (bus id or null), gpu_index and gpu_model (or null), nic
// (null or {pci, names}), nic_reason (or null), cpus, numa; a rank with
// several GPUs or NICs also has gpus (bus ids), gpu_indexes and nics (best
// first). Indented by 2, newline-terminated.
std::string PlanJson(const NodeModel& model, const BindPlan& plan);

// A rank's GPUs as indexes into NodeModel::gpus (bus order); empty: none.
std::vector<int> RankGpus(const RankPlan& rank);

// The model of the rank's first GPU as the topology names it, else its PCI
// ids ("10de:2330"); empty for a rank without a GPU.
std::string GpuModel(const NodeModel& model, const RankPlan& rank);

// What a task's stderr says about its node's plan (the plugin and dt-wire):
// "dist-train: warning: no topology binding: WHY" when `planned` failed,
// else one "dist-train: binding: WARNING" line per plan warning; "" when
// there is nothing to say.
std::string BindingNote(const Status& planned, const BindPlan& plan);

// Why the rank has its first NIC: the NIC's tier (rdma, fabric, or
// ethernet when the node has nothing better), how near it is (the first
// topology object it shares with the rank's first GPU and the PCIe hops
// between them, or whether it is local to the rank's CPUs), and the other
// local ranks that share it, e.g. "rdma, same PCIe switch as GPU 3 (4
// hops)" or "fabric, same host bridge as GPU 1 (4 hops), shared with local
// rank 0". The planner takes the best tier, then the fewest hops, and
// spreads ranks over equally good NICs. Empty: no NIC.
std::string NicReason(const NodeModel& model, const BindPlan& plan,
                      const RankPlan& rank);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_PLAN_REPORT_H_
