// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/job_deadline.h"

namespace dist_train {
namespace {

// slurm.h's INFINITE and NO_VAL, and slurm_protocol_defs.h's YEAR_MINUTES.
constexpr uint32_t kInfinite = 0xfffffffe;
constexpr uint32_t kNoVal = 0xfffffffd;
constexpr uint32_t kYearMinutes = 365 * 24 * 60;
constexpr int64_t kYearSeconds = int64_t{kYearMinutes} * 60;

bool NoLimit(uint32_t time_limit) {
  return time_limit == kInfinite || time_limit == kNoVal ||
         time_limit >= kYearMinutes;
}

}  // namespace

int64_t JobDeadline(const JobTimes& times) {
  if (times.end_time <= 0) return 0;  // not started, or unknown
  if (NoLimit(times.time_limit) &&
      (times.start_time <= 0 ||
       times.end_time - times.start_time >= kYearSeconds)) {
    return 0;
  }
  return times.end_time;
}

}  // namespace dist_train
