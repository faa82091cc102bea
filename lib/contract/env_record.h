// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// DT_EXPORTED remembers which variables dist-train set for a task, with a
// hash of each value ("MASTER_ADDR:9f1c...,RANK:0b7e..."). A later step
// that inherits the environment (an srun inside a batch script) uses it to
// tell values an enclosing step exported (same hash: recompute them) from
// values the user set on purpose (absent or different hash: keep them).

#ifndef DIST_TRAIN_LIB_CONTRACT_ENV_RECORD_H_
#define DIST_TRAIN_LIB_CONTRACT_ENV_RECORD_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/env.h"
#include "dist_train/status.h"

namespace dist_train {

constexpr char kExportedVar[] = "DT_EXPORTED";

using ExportRecord = std::map<std::string, uint64_t>;  // name -> value hash

// 64-bit FNV-1a of `value`.
uint64_t ValueHash(std::string_view value);

std::string FormatExportRecord(const EnvAssignments& assignments);

// Error names DT_EXPORTED and the offending entry.
Status ParseExportRecord(std::string_view text, ExportRecord* out);

// True when `env[name]` is exactly what the record says dist-train put there.
bool WasExportedUnchanged(const ExportRecord& record, const std::string& name,
                          const std::string& value);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_ENV_RECORD_H_
