// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/clock.h"

#include <time.h>

namespace dist_train {

double MonotonicSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

}  // namespace dist_train
