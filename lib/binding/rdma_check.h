// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Whether NCCL can use RDMA through the HCAs a GPU step's ranks are bound
// to. NCCL falls back to TCP sockets without a word at its default log
// level when it cannot (several times slower: nccl#286); the usual causes
// show in sysfs and /dev before it starts: the HCA not visible, no port
// active, no verbs device node (a container started without
// /dev/infiniband). docs/binding.md lists the checks.

#ifndef DIST_TRAIN_LIB_BINDING_RDMA_CHECK_H_
#define DIST_TRAIN_LIB_BINDING_RDMA_CHECK_H_

#include <string>

#include "binding/binding.h"
#include "binding/node_model.h"

namespace dist_train {

// Where the checks look (tests point them at a recorded tree).
struct RdmaRoots {
  std::string sys = "/sys";  // class/infiniband/HCA/{ports,device}
  std::string dev = "/dev";  // infiniband/uverbsN
};

// Why RDMA device `hca` (e.g. mlx5_0) cannot carry NCCL's traffic here,
// or "" when it can.
std::string RdmaUnusableReason(const std::string& hca, const RdmaRoots& roots);

// For a plan with GPUs: one warning naming each bound HCA NCCL cannot use,
// the ranks bound to it and why; "" when every one is usable (or the plan
// has no GPUs or no HCAs).
std::string RdmaFallbackNote(const NodeModel& model, const BindPlan& plan,
                             const RdmaRoots& roots);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_RDMA_CHECK_H_
