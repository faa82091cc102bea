// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// <slurm/spank.h> for C++: spank.h declares the hooks outside its own
// extern "C" block, so the include itself must be wrapped.

#ifndef DIST_TRAIN_SPANK_SPANK_API_H_
#define DIST_TRAIN_SPANK_SPANK_API_H_

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#endif  // DIST_TRAIN_SPANK_SPANK_API_H_
