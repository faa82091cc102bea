// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Test inputs: the topology fixtures in tests/fixtures, and every real
// GPU-server topology in ../shared/topologies when that folder is present
// (tests skip what it would add when it is absent; it is never copied into
// the project).

#ifndef DIST_TRAIN_LIB_TESTING_TESTING_TOPOLOGIES_H_
#define DIST_TRAIN_LIB_TESTING_TESTING_TOPOLOGIES_H_

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

namespace dist_train {
namespace testing_topologies {

inline std::string Fixture(const std::string& name) {
  return std::string(DT_SOURCE_DIR) + "/tests/fixtures/" + name;
}

// The *.xml files of ../shared/topologies and its derived/, sorted.
inline std::vector<std::string> RealTopologies() {
  std::vector<std::string> files;
  std::string root = std::string(DT_SOURCE_DIR) + "/../shared/topologies";
  for (const std::string& dir : {root, root + "/derived"}) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 4 && n.substr(n.size() - 4) == ".xml")
        files.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace testing_topologies
}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TESTING_TESTING_TOPOLOGIES_H_
