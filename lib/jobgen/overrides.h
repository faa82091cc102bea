// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// gen-sbatch's --set KEY.PATH=VALUE: the value (YAML, so "4", "[a, b]" and
// "{x: 1}" all work) replaces that key in the loaded document before it is
// validated, so an override meets exactly the checks the file does.

#ifndef DIST_TRAIN_LIB_JOBGEN_OVERRIDES_H_
#define DIST_TRAIN_LIB_JOBGEN_OVERRIDES_H_

#include <string>

#include "dist_train/status.h"
#include "jobgen/yaml_walker.h"

namespace dist_train {

// Applies one override ("job.nodes=4") to `root`, a mapping, creating
// mappings on the way, and records the key path in `src->from_set` so that
// errors about it name "--set job.nodes" instead of a file position.
// Errors name the override: "--set 'nodes': expected key.path=value".
Status ApplyOverride(const std::string& set, YAML::Node root, YamlSource* src);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_OVERRIDES_H_
