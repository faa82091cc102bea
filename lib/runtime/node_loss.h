// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// A lost node (--dist-train=node-loss=requeue, docs/user-guide.md "Lost
// nodes"): rank 0's control connection to a rank stopped answering at the
// TCP level (keepalive probes and data unacknowledged for kLossSeconds,
// runtime/wire.h), which a live machine's kernel never does, even for a
// stopped or hung process. Rank 0 then names the nodes it lost and, when
// the job asked for it, requeues the job without them
// (runtime/node_exclusion.h). A rank whose process ended (its machine
// closed the connection) is named but never excluded: a program's own
// crash would otherwise exclude a good node per requeue. The judgement is
// pure; CommunicatorImpl::AfterLoss gathers its inputs and applies it.

#ifndef DIST_TRAIN_LIB_RUNTIME_NODE_LOSS_H_
#define DIST_TRAIN_LIB_RUNTIME_NODE_LOSS_H_

#include <string>
#include <vector>

#include "base/env.h"
#include "contract/options.h"
#include "contract/step_layout.h"
#include "dist_train/status.h"

namespace dist_train {

// The prefix of every line about it.
constexpr const char* kNodeLossPrefix = "dist-train: node-loss: ";

// Whether the task's environment asks for a requeue on a lost node
// (kNodeLossVar, set by node-loss=requeue): DT_NODE_LOSS=requeue (true), fail
// or unset (false); another value is an error that names it.
Status ReadNodeLossPolicy(const EnvMap& env, bool* requeue);

struct NodeLossVerdict {
  std::vector<std::string> hosts;  // the lost nodes, in node order
  bool requeue = false;
  std::string why_not;  // when !requeue: one sentence
};

// The verdict on the ranks whose control connection to rank 0 was lost.
// With three or more nodes, losing every node but rank 0's own points at
// rank 0's network: nothing is excluded then (with two nodes nobody can
// tell; the other one is excluded).
NodeLossVerdict JudgeNodeLoss(const StepLayout& layout,
                              const std::vector<int>& lost_ranks);

// Whether `layout` groups the ranks into nodes the way their addresses do
// (`address_hosts[r]`: the host part of rank r's data address, which the
// ranks of one machine share): the layout comes from the environment and
// assumes blocks, so a step laid out otherwise would exclude good nodes.
// The error names the first rank where the two disagree.
Status CheckLayoutAgainstAddresses(
    const StepLayout& layout, const std::vector<std::string>& address_hosts);

// "node3 (ranks 2, 3)" per lost host, joined by ", ".
std::string LostNodesText(const StepLayout& layout,
                          const std::vector<int>& lost_ranks);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_NODE_LOSS_H_
