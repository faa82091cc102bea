// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The monotonic clock, in seconds, for deadlines and measured intervals.

#ifndef DIST_TRAIN_LIB_BASE_CLOCK_H_
#define DIST_TRAIN_LIB_BASE_CLOCK_H_

#include <cstdint>

namespace dist_train {

// CLOCK_MONOTONIC in seconds: never goes back, unaffected by date changes.
double MonotonicSeconds();
uint64_t MonotonicNanos();  // the same clock

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_CLOCK_H_
