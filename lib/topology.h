// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Loading a node's hwloc topology (live, or from a saved XML file) and
// extracting the NodeModel the planner uses. hwloc stays behind this file:
// no hwloc type appears in any other header.

#ifndef DIST_TRAIN_LIB_TOPOLOGY_H_
#define DIST_TRAIN_LIB_TOPOLOGY_H_

#include <string>

#include "dist_train/status.h"
#include "node_model.h"

namespace dist_train {

// Loads the topology from `xml_path`, or discovers this machine when it is
// empty, with PCI and OS devices kept, and extracts the model. Errors name
// the file.
Status LoadNodeModel(const std::string& xml_path, NodeModel* model);

// Discovers this machine and writes its topology as XML to `path`
// (atomically: temp file + rename), for fast loading later.
Status SaveTopologyXml(const std::string& path);

// PCI classes (hwloc's class_id: class << 8 | subclass).
bool IsGpuClass(uint16_t class_id, uint16_t vendor);
bool IsNicClass(uint16_t class_id);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TOPOLOGY_H_
