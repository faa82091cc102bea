// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/node_model.h"

#include <algorithm>

namespace dist_train {

int TreeDistance(const PciDevice& a, const PciDevice& b) {
  for (size_t i = 0; i < a.path.size(); ++i) {
    auto it = std::find(b.path.begin(), b.path.end(), a.path[i]);
    if (it != b.path.end()) return static_cast<int>(i + (it - b.path.begin()));
  }
  return static_cast<int>(a.path.size() + b.path.size());
}

std::vector<int> Intersect(const std::vector<int>& a,
                           const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::back_inserter(out));
  return out;
}

bool Overlaps(const std::vector<int>& a, const std::vector<int>& b) {
  return !Intersect(a, b).empty();
}

std::string CommonAncestorKind(const PciDevice& a, const PciDevice& b) {
  for (size_t i = 0; i < a.path.size(); ++i) {
    if (std::find(b.path.begin(), b.path.end(), a.path[i]) != b.path.end())
      return i < a.path_kinds.size() ? a.path_kinds[i] : "";
  }
  return "";
}

std::vector<int> AllPus(const NodeModel& model) {
  std::vector<int> pus;
  for (const Core& c : model.cores)
    pus.insert(pus.end(), c.pus.begin(), c.pus.end());
  std::sort(pus.begin(), pus.end());
  return pus;
}

}  // namespace dist_train
