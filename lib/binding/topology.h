// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Loading a node's hwloc topology (live, or from a saved XML file) and
// extracting the NodeModel the planner uses. hwloc stays behind this file:
// no hwloc type appears in any other header.

#ifndef DIST_TRAIN_LIB_BINDING_TOPOLOGY_H_
#define DIST_TRAIN_LIB_BINDING_TOPOLOGY_H_

#include <cstddef>
#include <string>

#include "binding/node_model.h"
#include "dist_train/status.h"

namespace dist_train {

// Loads the topology from `xml_path`, or discovers this machine when it is
// empty, with PCI and OS devices kept, and extracts the model. Errors name
// the file. hwloc 2.9 crashes on some malformed XML (docs/binding.md): give
// this only files you trust; see the two loaders below.
Status LoadNodeModel(const std::string& xml_path, NodeModel* model);

// For slurmstepd: loads `xml_path` only if the file could not have been
// written by anyone but root (ReadRootOnlyFile, binding/root_files.h).
// Errors start with the path.
Status LoadTrustedNodeModel(const std::string& xml_path, NodeModel* model);

// The model of topology XML already read (`what` names it in errors):
// only for bytes of a trusted file, as LoadTrustedNodeModel reads them.
Status NodeModelFromXml(const std::string& what, const std::string& xml,
                        NodeModel* model);

// For a user's file (dt-topo --topology): hwloc first parses it in a child
// process, so that a crash is an error ("hwloc crashed parsing FILE (signal
// 11)") rather than the end of the caller; a child still busy after
// `timeout_s` seconds is killed. The parent then loads the bytes the child
// parsed.
Status LoadNodeModelIsolated(const std::string& xml_path, NodeModel* model,
                             int timeout_s = 60);

// Discovers this machine and writes its topology as XML to `path`,
// atomically (a new temp file, created without following symlinks, then
// renamed), mode 0644, after checking that hwloc loads the export back
// into the same model.
Status SaveTopologyXml(const std::string& path);

// PCI classes (hwloc's class_id: class << 8 | subclass).
bool IsGpuClass(uint16_t class_id, uint16_t vendor);
bool IsNicClass(uint16_t class_id);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_TOPOLOGY_H_
