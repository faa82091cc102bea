// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Agreements among all ranks over the star of control connections (rank 0
// holds one to every rank, each rank one to rank 0), for the set-up steps
// that need one value everywhere before any collective can run: rank 0
// answers every rank at once, so an agreement costs one round trip per
// rank, never a pass along the ring (1,024 ranks on one 2-CPU machine: a
// 4-byte ring all-reduce is 2,046 hops, each a wake-up, ~0.4 s). `ctrl` is
// the communicator's: on rank 0 one connection per rank (its own slot
// unused), elsewhere ctrl[0] to rank 0. An abort notice, a closed
// connection or a malformed answer ends it with an error naming the rank.

#ifndef DIST_TRAIN_LIB_RUNTIME_STAR_AGREEMENT_H_
#define DIST_TRAIN_LIB_RUNTIME_STAR_AGREEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dist_train/status.h"
#include "runtime/wire.h"

namespace dist_train {

// Rank 0's `value` (at most `max_len` bytes) into `value` on every rank.
Status StarBroadcast(std::vector<Conn>* ctrl, int rank, size_t max_len,
                     std::string* value, Deadline deadline);

// The minimum of `value` over all ranks, into `value` on every rank.
Status StarAllMin(std::vector<Conn>* ctrl, int rank, int32_t* value,
                  Deadline deadline);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_STAR_AGREEMENT_H_
