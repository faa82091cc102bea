// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The ring algorithms over a RingLink, and RingTransport.

#include "runtime/ring_collectives.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/reduce.h"

namespace dist_train {

namespace {

constexpr size_t kBroadcastChunk = 1 << 20;
constexpr size_t kPipelinePiece = 1 << 20;

// All-reduces whose n vectors together are at most this take
// GatherAndReduce instead of the ring's two passes.
constexpr size_t kGatherAllBytes = 64 << 10;

// With fewer elements than ranks (a Barrier's one), only up to this many
// ranks. Gathering costs every rank n - 1 exchanges; the ring's steps
// with nothing to move cost nothing, but the element still takes 2(n - 1)
// hops one after the other. 4 B over TCP on one machine (DT_SHM=0): 2
// ranks 56 us by the ring, 8 us gathered; 4 ranks 103-122 us, 54-58 us.
// Gathering at any n made the three one-element agreements of a 1,024-
// rank start on 2 CPUs cost 1,023 exchanges per rank: launch -> first
// all-reduce 8.7-9.0 s instead of 3.0-3.4 s.
constexpr int kGatherFewRanks = 8;

// Small vectors: every rank's whole vector goes round the ring (an
// all-gather, n - 1 steps instead of the reduce-scatter's and all-gather's
// 2(n - 1)), then every rank reduces all n in ring order, so all get the
// same bits. Latency-bound sizes only: it moves n times the vector.
Status GatherAndReduce(RingLink* ring, char* buf, size_t count, DataType type,
                       ReduceOp op) {
  const size_t elem_size = DataTypeSize(type), bytes = count * elem_size;
  const int n = ring->size();
  char* all = ring->Scratch(bytes * n);
  std::memcpy(all + bytes * ring->rank(), buf, bytes);
  DT_RETURN_IF_ERROR(RingAllGather(ring, all, count * n, elem_size));
  ReduceInOrder(
      buf, n, [&](int i) { return all + bytes * i; }, count, type, op);
  return Status::OK();
}

}  // namespace

size_t SegmentStart(size_t count, int n, int i) {
  return count * static_cast<size_t>(i) / static_cast<size_t>(n);
}

Status RingReduceScatter(RingLink* ring, char* buf, size_t count, DataType type,
                         ReduceOp op) {
  const int n = ring->size(), r = ring->rank();
  const size_t elem_size = DataTypeSize(type);
  char* incoming = ring->Scratch((count / n + 1) * elem_size);
  for (int step = 0; step < n - 1; ++step) {
    int send_seg = Mod(r - step - 1, n), recv_seg = Mod(r - step - 2, n);
    size_t send_lo = SegmentStart(count, n, send_seg),
           send_hi = SegmentStart(count, n, send_seg + 1);
    size_t recv_lo = SegmentStart(count, n, recv_seg),
           recv_hi = SegmentStart(count, n, recv_seg + 1);
    // The whole segment goes out while the incoming one is reduced piece
    // by piece as it completes, so reducing overlaps the transfer.
    const size_t total = recv_hi - recv_lo;
    size_t done = 0;
    auto reduce_ready = [&](size_t got) {
      size_t ready = got / elem_size;
      if (ready - done < kPipelinePiece / elem_size && ready != total) return;
      ReduceInto(buf + (recv_lo + done) * elem_size,
                 incoming + done * elem_size, ready - done, type, op);
      done = ready;
    };
    DT_RETURN_IF_ERROR(ring->Exchange(buf + send_lo * elem_size,
                                      (send_hi - send_lo) * elem_size, incoming,
                                      total * elem_size, reduce_ready));
  }
  return Status::OK();
}

Status RingAllGather(RingLink* ring, char* buf, size_t count,
                     size_t elem_size) {
  const int n = ring->size(), r = ring->rank();
  for (int step = 0; step < n - 1; ++step) {
    int send_seg = Mod(r - step, n), recv_seg = Mod(r - step - 1, n);
    size_t send_lo = SegmentStart(count, n, send_seg),
           send_hi = SegmentStart(count, n, send_seg + 1);
    size_t recv_lo = SegmentStart(count, n, recv_seg),
           recv_hi = SegmentStart(count, n, recv_seg + 1);
    DT_RETURN_IF_ERROR(ring->Exchange(
        buf + send_lo * elem_size, (send_hi - send_lo) * elem_size,
        buf + recv_lo * elem_size, (recv_hi - recv_lo) * elem_size));
  }
  return Status::OK();
}

Status RingAllReduce(RingLink* ring, char* buf, size_t count, DataType type,
                     ReduceOp op) {
  const int n = ring->size();
  if (n < 2 || count == 0) return Status::OK();
  if (count * DataTypeSize(type) * n <= kGatherAllBytes &&
      (count >= static_cast<size_t>(n) || n <= kGatherFewRanks))
    return GatherAndReduce(ring, buf, count, type, op);
  DT_RETURN_IF_ERROR(RingReduceScatter(ring, buf, count, type, op));
  return RingAllGather(ring, buf, count, DataTypeSize(type));
}

// Chunks pass along the ring from `root`.
Status RingBroadcast(RingLink* ring, char* buf, size_t bytes, int root) {
  const int n = ring->size(), r = ring->rank();
  if (n == 1) return Status::OK();
  bool receives = r != root, sends = (r + 1) % n != root;
  for (size_t off = 0; off < bytes; off += kBroadcastChunk) {
    size_t len = std::min(kBroadcastChunk, bytes - off);
    if (receives)
      DT_RETURN_IF_ERROR(ring->Exchange(nullptr, 0, buf + off, len));
    if (sends) DT_RETURN_IF_ERROR(ring->Exchange(buf + off, len, nullptr, 0));
  }
  return Status::OK();
}

Status RingTransport::AllReduceInPlace(char* buf, size_t count, DataType type,
                                       ReduceOp op) {
  return RingAllReduce(ring_, buf, count, type, op);
}

// The ring reduces in place: it works on a copy of `send`.
Status RingTransport::ReduceScatterInto(const char* send, char* recv,
                                        size_t count, DataType type,
                                        ReduceOp op) {
  const size_t elem_size = DataTypeSize(type), total = count * size();
  std::vector<char> work(send, send + total * elem_size);
  DT_RETURN_IF_ERROR(RingReduceScatter(ring_, work.data(), total, type, op));
  if (count > 0)
    std::memcpy(recv, work.data() + count * rank() * elem_size,
                count * elem_size);
  return Status::OK();
}

Status RingTransport::AllGatherInPlace(char* buf, size_t piece) {
  return RingAllGather(ring_, buf, piece * size(), 1);
}

Status RingTransport::BroadcastBytes(char* buf, size_t bytes, int root) {
  return RingBroadcast(ring_, buf, bytes, root);
}

}  // namespace dist_train
