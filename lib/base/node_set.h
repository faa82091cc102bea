// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// A job's excluded nodes grown by more hosts, as one ranged node list
// (libslurm's slurm_hostlist_*), for the ExcNodeList of a requeue that
// leaves bad nodes out (runtime/node_exclusion.h). Kept apart from
// base/hostlist so that the plugin, which only reads node lists, does not
// reference the libslurm functions this file needs.

#ifndef DIST_TRAIN_LIB_BASE_NODE_SET_H_
#define DIST_TRAIN_LIB_BASE_NODE_SET_H_

#include <string>
#include <vector>

#include "dist_train/status.h"

namespace dist_train {

// `existing` (a node list, "" for none) with each of `add` that it does
// not name yet, sorted, as libslurm writes a ranged list ("node[1-3,7]"). Every
// host is checked as base/hostlist checks node lists; errors name `what`.
Status MergeNodeLists(const std::string& existing,
                      const std::vector<std::string>& add, const char* what,
                      std::string* merged);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_NODE_SET_H_
