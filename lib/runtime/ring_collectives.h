// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The ring algorithms (reduce-scatter, all-gather, all-reduce, broadcast)
// on any RingLink, and RingTransport, the four collectives over one ring:
// the TCP ring of all ranks in a job, the in-memory ring in tests.

#ifndef DIST_TRAIN_LIB_RUNTIME_RING_COLLECTIVES_H_
#define DIST_TRAIN_LIB_RUNTIME_RING_COLLECTIVES_H_

#include <cstddef>
#include <string>

#include "dist_train/runtime.h"
#include "runtime/transport.h"

namespace dist_train {

inline int Mod(int a, int n) { return ((a % n) + n) % n; }
// Segment i of `count` elements split n ways starts here.
size_t SegmentStart(size_t count, int n, int i);

// In place on `count` elements: afterwards ring rank r holds the reduced
// segment r (segment i = elements [SegmentStart(i), SegmentStart(i+1))).
Status RingReduceScatter(RingLink* ring, char* buf, size_t count, DataType type,
                         ReduceOp op);
// Ring rank r starts with segment r of `count` elements, ends with all.
Status RingAllGather(RingLink* ring, char* buf, size_t count, size_t elem_size);
// In place; every rank gets the same bits.
Status RingAllReduce(RingLink* ring, char* buf, size_t count, DataType type,
                     ReduceOp op);
// Ring rank `root`'s bytes to every rank.
Status RingBroadcast(RingLink* ring, char* buf, size_t bytes, int root);

// The collectives over one ring of every rank (ring rank = rank).
class RingTransport : public HostTransport {
 public:
  // `name` for Describe ("tcp ring").
  RingTransport(RingLink* ring, std::string name)
      : HostTransport(ring->rank(), ring->size()),
        ring_(ring),
        name_(std::move(name)) {}
  std::string Describe() const override { return name_ + " " + Ranks(); }

 protected:
  Status AllReduceInPlace(char* buf, size_t count, DataType type,
                          ReduceOp op) override;
  Status ReduceScatterInto(const char* send, char* recv, size_t count,
                           DataType type, ReduceOp op) override;
  Status AllGatherInPlace(char* buf, size_t piece) override;
  Status BroadcastBytes(char* buf, size_t bytes, int root) override;

 private:
  RingLink* ring_;
  std::string name_;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_RING_COLLECTIVES_H_
