// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Reading the job/task environment inside slurmstepd (spank_getenv).

#ifndef DIST_TRAIN_SPANK_SPANK_ENV_H_
#define DIST_TRAIN_SPANK_SPANK_ENV_H_

#include <string>

#include "spank_api.h"

namespace dist_train {

// The value of `name` in the job's environment; false when unset. Values up
// to 1 MiB (long node lists) are read whole.
bool GetEnv(spank_t sp, const char* name, std::string* out);

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_SPANK_ENV_H_
