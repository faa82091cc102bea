// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// When a job must end (DT_JOB_DEADLINE), decided from what slurmctld says
// of it (pure: lib/base/slurm_compat.h's LoadJobTimes fetches the facts).

#ifndef DIST_TRAIN_LIB_CONTRACT_JOB_DEADLINE_H_
#define DIST_TRAIN_LIB_CONTRACT_JOB_DEADLINE_H_

#include <cstdint>

#include "base/slurm_compat.h"

namespace dist_train {

// The variable every task of a job with a time limit gets: its end time
// (Unix seconds).
constexpr char kDeadlineVar[] = "DT_JOB_DEADLINE";

// The job's end time (Unix seconds), or 0 when it has no time limit.
//
// slurmctld gives a job without a limit an end time one year after its
// start. Its limit then reads INFINITE, or NO_VAL, or, when the backfill
// scheduler started it with no limit of its own, 365 days (YEAR_MINUTES:
// every requeue resets a limit the user did not set to NO_VAL, and
// backfill fills that in; Slurm 22.05 to 26.05). A limit of 365 days or
// more is therefore none. An end time before that year is a real deadline
// even then (a preemption's grace time sets it).
int64_t JobDeadline(const JobTimes& times);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_JOB_DEADLINE_H_
