// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Topology binding inside slurmstepd: the node's topology is loaded and
// the plan for all local ranks computed once per step (user_init); each
// task applies its share (task_init). Any failure degrades to no binding
// with one warning; it never fails the job.

#ifndef DIST_TRAIN_SPANK_BINDER_H_
#define DIST_TRAIN_SPANK_BINDER_H_

#include <string>

#include "contract.h"
#include "spank_api.h"
#include "state.h"

namespace dist_train {

// user_init: fills st->model/plan/bound, or st->bind_note.
void PrepareBinding(spank_t sp, PluginState* st);

// task_init: this rank's binding variables (to merge into the contract).
EnvAssignments RankBindingEnv(spank_t sp, const PluginState& st,
                              uint32_t local_rank);

// task_init: sets the calling task's CPU affinity to its share. Returns a
// warning ("" when fine or nothing to do).
std::string ApplyAffinity(const PluginState& st, uint32_t local_rank);

// slurmd start (root): saves the node's topology as XML for fast loading.
void SaveTopologyCache(const PluginConfig& cfg);

// The cache path with %h replaced by the hostname.
std::string CachePath(const PluginConfig& cfg);

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_BINDER_H_
