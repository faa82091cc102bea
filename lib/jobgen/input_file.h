// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Reading gen-sbatch's input files (the config, a --template) with a size
// cap: they are small, and a cap keeps a mistaken or hostile input
// (/dev/zero, a multi-gigabyte file) from exhausting memory before any
// check runs.

#ifndef DIST_TRAIN_LIB_JOBGEN_INPUT_FILE_H_
#define DIST_TRAIN_LIB_JOBGEN_INPUT_FILE_H_

#include <cstddef>
#include <string>

#include "dist_train/status.h"

namespace dist_train {

// The cap on each gen-sbatch input file: 1 MiB.
constexpr size_t kMaxInputBytes = size_t{1} << 20;

// Reads `path` whole into `*text`, reading at most max_bytes + 1 bytes.
// NotFound "PATH: cannot read the file" when it cannot be opened or read
// (a directory), InvalidArgument "PATH: larger than the 1048576-byte limit
// for a gen-sbatch input" when it holds more than `max_bytes`.
Status ReadInputFile(const std::string& path, size_t max_bytes,
                     std::string* text);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_INPUT_FILE_H_
