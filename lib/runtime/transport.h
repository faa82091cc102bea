// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The transport seam of the runtime, as NCCL's src/transport/: a
// Transport carries the four collectives one way (a single rank, shared
// memory, the TCP ring, shared memory under a ring of machines, NCCL);
// Communicator::Create's bootstrap picks the host one, the first device
// buffer makes the NCCL one, and the public collectives only dispatch.
// Ring algorithms need of a network only a RingLink (a rank's place on a
// ring), which the TCP ring and the in-memory ring of the unit tests
// (memory_ring.h) both are.

#ifndef DIST_TRAIN_LIB_RUNTIME_TRANSPORT_H_
#define DIST_TRAIN_LIB_RUNTIME_TRANSPORT_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "dist_train/runtime.h"

namespace dist_train {

// The contracts of Communicator's collectives (in place when send == recv;
// kAvg divides by the number of ranks).
class Transport {
 public:
  virtual ~Transport() = default;
  // For Communicator::Describe: "tcp ring (4 ranks)".
  virtual std::string Describe() const = 0;
  virtual Status AllReduce(const void* send, void* recv, size_t count,
                           DataType type, ReduceOp op) = 0;
  // send holds size * count elements; recv gets this rank's reduced slice.
  virtual Status ReduceScatter(const void* send, void* recv, size_t count,
                               DataType type, ReduceOp op) = 0;
  // recv holds size * count elements, rank r's at r * count.
  virtual Status AllGather(const void* send, void* recv, size_t count,
                           DataType type) = 0;
  virtual Status Broadcast(void* buf, size_t count, DataType type,
                           int root) = 0;
};

// A transport of host memory: implements the in-place forms; this class
// gives them Transport's contracts (the copy in, kAvg's division).
class HostTransport : public Transport {
 public:
  HostTransport(int rank, int size) : rank_(rank), size_(size) {}

  Status AllReduce(const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op) final;
  Status ReduceScatter(const void* send, void* recv, size_t count,
                       DataType type, ReduceOp op) final;
  Status AllGather(const void* send, void* recv, size_t count,
                   DataType type) final;
  Status Broadcast(void* buf, size_t count, DataType type, int root) final;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // "(4 ranks)", for Describe.
  std::string Ranks() const;

 protected:
  // buf: `count` elements, reduced in place on every rank.
  virtual Status AllReduceInPlace(char* buf, size_t count, DataType type,
                                  ReduceOp op) = 0;
  // send: size * count elements; recv: this rank's `count` of the result.
  virtual Status ReduceScatterInto(const char* send, char* recv, size_t count,
                                   DataType type, ReduceOp op) = 0;
  // buf: size pieces of `piece` bytes, ours filled; fills the others.
  virtual Status AllGatherInPlace(char* buf, size_t piece) = 0;
  virtual Status BroadcastBytes(char* buf, size_t bytes, int root) = 0;

 private:
  int rank_, size_;
};

// One rank's place on a ring of `size` ranks: what the ring algorithms
// (ring_collectives.h) need of a network.
class RingLink {
 public:
  // `scratch`: a buffer shared with other links of this rank (nullptr: one
  // of its own).
  explicit RingLink(std::vector<char>* scratch = nullptr)
      : scratch_(scratch ? scratch : &own_scratch_) {}
  virtual ~RingLink() = default;
  RingLink(const RingLink&) = delete;
  RingLink& operator=(const RingLink&) = delete;

  virtual int size() const = 0;
  virtual int rank() const = 0;
  // Sends sbuf to the next rank while receiving rbuf from the previous one;
  // `on_recv(bytes so far)` runs whenever more arrived (e.g. to reduce what
  // is complete while the rest is still on the wire). An error names the
  // peer that failed.
  virtual Status Exchange(const char* sbuf, size_t slen, char* rbuf,
                          size_t rlen,
                          const std::function<void(size_t)>& on_recv) = 0;
  Status Exchange(const char* sbuf, size_t slen, char* rbuf, size_t rlen) {
    return Exchange(sbuf, slen, rbuf, rlen, nullptr);
  }

  // A receive buffer of at least `bytes`, kept between collectives: a fresh
  // one per call costs page faults and zeroing (large ones are mmapped).
  char* Scratch(size_t bytes) {
    if (scratch_->size() < bytes) scratch_->resize(bytes);
    return scratch_->data();
  }

 private:
  std::vector<char> own_scratch_;
  std::vector<char>* scratch_;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_TRANSPORT_H_
