// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/node_loss.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "base/parse.h"

namespace dist_train {
namespace {

// The lost hosts in node order, each with its lost ranks (ascending).
std::vector<std::pair<std::string, std::vector<int>>> ByHost(
    const StepLayout& layout, std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<std::pair<std::string, std::vector<int>>> out;
  for (const std::string& host : layout.hosts) {
    std::vector<int> mine;
    for (int r : ranks)
      if (r >= 0 && layout.HostOf(static_cast<uint32_t>(r)) == host)
        mine.push_back(r);
    if (!mine.empty()) out.emplace_back(host, mine);
  }
  return out;
}

}  // namespace

Status ReadNodeLossPolicy(const EnvMap& env, bool* requeue) {
  const std::string* v = EnvFind(env, kNodeLossVar);
  if (v == nullptr || *v == "fail" || *v == "requeue") {
    *requeue = v != nullptr && *v == "requeue";
    return Status::OK();
  }
  return Status::InvalidArgument(std::string(kNodeLossVar) + "='" +
                                 ShownValue(*v) + "' is not fail or requeue");
}

NodeLossVerdict JudgeNodeLoss(const StepLayout& layout,
                              const std::vector<int>& lost_ranks) {
  NodeLossVerdict v;
  const std::string mine = layout.HostOf(0);
  for (auto& [host, ranks] : ByHost(layout, lost_ranks))
    if (host != mine) v.hosts.push_back(host);
  std::set<std::string> others(layout.hosts.begin(), layout.hosts.end());
  others.erase(mine);
  if (v.hosts.empty()) {
    v.why_not = "no node but rank 0's own lost its ranks";
  } else if (others.size() >= 2 && v.hosts.size() == others.size()) {
    v.why_not = "every other node stopped answering rank 0 on " + mine +
                ": its own network is the likelier fault";
  } else {
    v.requeue = true;
  }
  return v;
}

Status CheckLayoutAgainstAddresses(
    const StepLayout& layout, const std::vector<std::string>& address_hosts) {
  uint64_t covered = 0;
  for (uint32_t t : layout.tasks) covered += t;
  if (covered != address_hosts.size()) {
    return Status::InvalidArgument(
        "the step's layout has " + std::to_string(covered) +
        " ranks, the job " + std::to_string(address_hosts.size()));
  }
  std::map<std::string, std::pair<std::string, uint32_t>> by_node, by_address;
  for (uint32_t r = 0; r < address_hosts.size(); ++r) {
    const std::string node = layout.HostOf(r), &address = address_hosts[r];
    auto [n, new_node] = by_node.emplace(node, std::make_pair(address, r));
    auto [a, new_address] =
        by_address.emplace(address, std::make_pair(node, r));
    if (!new_node && n->second.first != address) {
      return Status::InvalidArgument(
          "rank " + std::to_string(r) + " would be on " + node + " with rank " +
          std::to_string(n->second.second) + ", but its address is " + address +
          ", not " + n->second.first +
          ": the ranks are not laid out in blocks");
    }
    if (!new_address && a->second.first != node) {
      return Status::InvalidArgument(
          "rank " + std::to_string(r) + " would be on " + node +
          ", but its address " + address + " is rank " +
          std::to_string(a->second.second) + "'s, on " + a->second.first +
          ": the ranks are not laid out in blocks");
    }
  }
  return Status::OK();
}

std::string LostNodesText(const StepLayout& layout,
                          const std::vector<int>& lost_ranks) {
  std::string out;
  for (auto& [host, ranks] : ByHost(layout, lost_ranks)) {
    std::string list;
    for (int r : ranks) list += (list.empty() ? "" : ", ") + std::to_string(r);
    out += (out.empty() ? "" : ", ") + host + " (rank" +
           (ranks.size() > 1 ? "s " : " ") + list + ")";
  }
  return out;
}

}  // namespace dist_train
