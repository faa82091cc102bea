// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Topology binding inside slurmstepd: the plugin's BindSource for the
// wiring pipeline (wiring/node_binding.h). The node's topology is loaded
// and the plan for all local ranks made once per step (user_init); each
// task takes its share in task_init (wiring/task_wiring.h). Any failure
// degrades to no binding with one warning; it never fails the job.

#ifndef DIST_TRAIN_SPANK_BINDER_H_
#define DIST_TRAIN_SPANK_BINDER_H_

#include <optional>
#include <string>
#include <vector>

#include "spank_host.h"
#include "state.h"

namespace dist_train {

// user_init: plans st->binding from SPANK items and slurmd's topology cache,
// and logs the timings once per step per node.
void PrepareBinding(SpankHost& host, PluginState* st);

// slurmd start (root): saves the node's topology as XML, and the node
// model made from that XML beside it (binding/model_cache.h), for fast
// loading in every step.
void SaveTopologyCache(const PluginConfig& cfg);

// The cache path with %h replaced by the hostname.
std::string CachePath(const PluginConfig& cfg);

// The step's CPUs (the job's for the batch step) as OS PU indexes: Slurm's
// alloc cores ("0-3,8") are indexes of the node's cores in topology order.
// Stays unset when Slurm does not say (every allowed PU).
Status StepCpus(SpankHost& host, uint32_t step_id, const NodeModel& m,
                std::optional<std::vector<int>>* cpus);

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_BINDER_H_
