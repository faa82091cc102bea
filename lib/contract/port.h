// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// MASTER_PORT selection.
//
// 1. When Slurm reserved ports for the step (MpiParams=ports=A-B and
//    `srun --resv-ports`), SLURM_STEP_RESV_PORTS is set and its first port
//    is used: slurmctld guarantees it is free on all of the step's nodes.
// 2. Otherwise the port is derived from (job id, step id) inside the admin's
//    range [min, max]:  port = min + (job_id * kSlotsPerJob + slot) mod size,
//    where slot is the step id (mod kSlotsPerJob - 3) and the batch,
//    interactive and extern steps have their own slots. So every step of a
//    job with fewer than kSlotsPerJob - 3 steps, and every job within
//    size / kSlotsPerJob consecutive job ids (399 for the default range),
//    gets a distinct port. The collisions that remain (job ids that differ
//    by a multiple of size / kSlotsPerJob, step ids that wrap, or a port
//    some unrelated process holds) are detected by the runtime's handshake.

#ifndef DIST_TRAIN_LIB_CONTRACT_PORT_H_
#define DIST_TRAIN_LIB_CONTRACT_PORT_H_

#include <cstdint>
#include <string_view>

#include "base/slurm_ids.h"
#include "dist_train/status.h"

namespace dist_train {

constexpr uint32_t kSlotsPerJob = 32;

// Port derived from job and step id in [min, max]. Requires min <= max.
uint16_t DerivePort(uint32_t job_id, uint32_t step_id, uint16_t min,
                    uint16_t max);

// The first port of a SLURM_STEP_RESV_PORTS value ("12000-12003",
// "12000,12005" or "12000"). Error names the variable and the value.
Status FirstReservedPort(std::string_view resv_ports, uint16_t* port);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_PORT_H_
