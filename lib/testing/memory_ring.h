// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The in-memory transport: a ring of `size` RingLinks in one process, one
// per thread, so the ring algorithms and RingTransport are tested without
// sockets or forked ranks. Bytes arrive in pieces of at most `piece`
// (exercising the pipelined reduce), a rank can be broken (its neighbours'
// exchanges fail naming it), and every wait has a deadline.

#ifndef DIST_TRAIN_LIB_TESTING_MEMORY_RING_H_
#define DIST_TRAIN_LIB_TESTING_MEMORY_RING_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/transport.h"

namespace dist_train {

struct MemoryRingOptions {
  // Most bytes one on_recv call sees arrive (default 64 KiB).
  size_t piece = 64 << 10;
  // An exchange that waits longer for its bytes fails (default 10 s).
  double timeout_seconds = 10;
};

class MemoryRing {
 public:
  explicit MemoryRing(int size, MemoryRingOptions options = {});
  ~MemoryRing();
  MemoryRing(const MemoryRing&) = delete;
  MemoryRing& operator=(const MemoryRing&) = delete;

  int size() const { return static_cast<int>(links_.size()); }
  // Rank r's link; one thread per rank uses it.
  RingLink* link(int rank) { return links_[rank].get(); }
  // Rank r fails: what it sends is lost, and its next rank's exchanges
  // fail with "rank R closed the connection".
  void Break(int rank);

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
  std::vector<std::unique_ptr<RingLink>> links_;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TESTING_MEMORY_RING_H_
