// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/overrides.h"

#include <string_view>
#include <vector>

#include "base/parse.h"

namespace dist_train {

Status ApplyOverride(const std::string& set, YAML::Node root, YamlSource* src) {
  size_t eq = set.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("--set '" + set +
                                   "': expected key.path=value");
  }
  std::string path = set.substr(0, eq);
  std::vector<std::string> keys;
  for (std::string_view part : Split(path, '.')) keys.emplace_back(part);
  YAML::Node value;
  Status st = LoadYamlValue(set.substr(eq + 1), &value);
  if (st.ok()) st = ReplaceAtPath(root, keys, value);
  if (!st.ok()) {
    return Status::InvalidArgument("--set '" + set + "': " + st.message());
  }
  src->from_set.insert(path);
  return Status::OK();
}

}  // namespace dist_train
