// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The node model saved beside the topology cache, so that a step loads a
// few kilobytes instead of having hwloc parse the XML (3-4 ms per node
// per step). slurmd writes it right after the XML, from that XML's bytes;
// it records which file it was made from (device, inode, size, mtime,
// ctime), and a step uses it only while the XML is still that file.

#ifndef DIST_TRAIN_LIB_BINDING_MODEL_CACHE_H_
#define DIST_TRAIN_LIB_BINDING_MODEL_CACHE_H_

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "binding/node_model.h"
#include "dist_train/status.h"

namespace dist_train {

// Which file a model was made from: what any rewrite, replacement or
// chmod of it changes.
struct FileIdentity {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_s = 0, mtime_ns = 0, ctime_s = 0, ctime_ns = 0;
  static FileIdentity Of(const struct stat& st);
  bool operator==(const FileIdentity& o) const;
};

// The model file of a topology cache: "<xml_path>.model".
std::string ModelCachePath(const std::string& xml_path);

// A versioned binary form of `model` and the identity of its XML.
std::string EncodeNodeModel(const NodeModel& model, const FileIdentity& xml);

// The inverse; `where` names the bytes in errors ("FILE: offset N: what").
// Refuses another version, truncated or trailing bytes, and values out of
// range (more elements than bytes left, a tier that does not exist...).
Status DecodeNodeModel(const std::string& bytes, const std::string& where,
                       NodeModel* model, FileIdentity* xml);

// slurmd: reads the root-only `xml_path` (as a step would), makes its
// model and writes ModelCachePath(xml_path) atomically.
Status SaveNodeModelCache(const std::string& xml_path);

// A step: the model saved for `xml_path`, if its file is root-only and
// the XML is still the file it was made from. NotFound when no model file
// exists (the caller then loads the XML); any other error says why the
// saved model is not used.
Status LoadNodeModelCache(const std::string& xml_path, NodeModel* model);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_MODEL_CACHE_H_
