// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The node's binding for one step (task mode): planned once per node from
// what an adapter gathers (BindSource), then each task takes its rank's
// share: the binding variables and the CPU affinity. A failure to plan is
// never fatal: the tasks run unbound, with one note on the first task's
// stderr (docs/binding.md).

#ifndef DIST_TRAIN_LIB_WIRING_NODE_BINDING_H_
#define DIST_TRAIN_LIB_WIRING_NODE_BINDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/env.h"
#include "binding/binding.h"
#include "binding/node_model.h"
#include "contract/options.h"
#include "dist_train/status.h"

namespace dist_train {

struct NodeBinding {
  bool bound = false;  // `plan` holds every local rank's share
  NodeModel model;
  BindPlan plan;
  std::string note;             // why there is no binding, or plan warnings
  std::string topology_source;  // the XML file, or "live discovery"
  // The node's interfaces sockets can use (gathered only when NICs are
  // bound): NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME come from these.
  std::vector<std::string> socket_interfaces;
  std::string rdma_note;  // bound HCAs NCCL cannot use (also in `note`)
};

// What the planner needs from the adapter: the plugin reads SPANK items and
// slurmd's topology cache, dt-wire the task's SLURM_* variables.
class BindSource {
 public:
  virtual ~BindSource() = default;
  // The node's model, and where it came from (for the verbose report).
  virtual Status LoadModel(NodeModel* model, std::string* source) = 0;
  // The step's request (tasks, GPUs, CPUs) with `parts` to bind.
  virtual Status Request(const NodeModel& model, BindParts parts,
                         BindRequest* request) = 0;
  // Sets RankPlan::rank of each local rank whose global rank is known.
  virtual void NameRanks(BindPlan* plan) = 0;
  // The interfaces sockets can use here; by default the live list of this
  // network namespace (none when it cannot be read).
  virtual std::vector<std::string> UsableInterfaces();
  // A warning naming the plan's HCAs NCCL cannot use (binding/rdma_check.h),
  // or ""; by default checked in this node's /sys and /dev.
  virtual std::string RdmaNote(const NodeModel& model, const BindPlan& plan);
};

// Whether this step's tasks are bound at all: task mode, not the batch step
// (binding the job script like one rank would confine it to GPU 0's CPUs),
// and some part of the binding switched on.
bool BindsStep(const PluginConfig& cfg, const JobOptions& opts,
               uint32_t step_id);

// Plans the node's binding into `out` (bound, or a note saying why not).
void PlanNodeBinding(const PluginConfig& cfg, const JobOptions& opts,
                     BindSource& source, NodeBinding* out);

// The plan of local rank `local_rank`, or null (unbound, or no such rank).
const RankPlan* RankOf(const NodeBinding& b, uint32_t local_rank);

// The binding variables of local rank `local_rank` (none when unbound).
// `env` is the task's: its CUDA_VISIBLE_DEVICES is Slurm's for the step.
EnvAssignments RankBindingEnv(const PluginConfig& cfg, const JobOptions& opts,
                              const NodeBinding& b, uint32_t local_rank,
                              const EnvMap& env);

// Sets the calling task's CPU affinity to local rank `local_rank`'s CPUs
// when CPUs are bound. Returns a warning ("" when fine or nothing to do).
std::string ApplyRankAffinity(const PluginConfig& cfg, const JobOptions& opts,
                              const NodeBinding& b, uint32_t local_rank);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_WIRING_NODE_BINDING_H_
