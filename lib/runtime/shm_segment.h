// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// A shared-memory segment for the ranks of one machine: rank 0 creates it
// under a random name (mode 0600), the others open it, and rank 0 unlinks
// the name as soon as everyone has it mapped, so nothing is left behind even
// after kill -9. Layout: per rank, two sets (barrier epochs alternate) of
// one cache line, a tag (the rank's barrier counter: an epoch) and
// kLinePayload bytes that carry the smallest vectors; then one line for the
// wake-up word (a futex the last rank at a barrier bumps), the count of its
// sleepers and the count of arrivals at barriers (with more ranks than CPUs),
// then two sets of (one slot per rank + one result area), `chunk` bytes each.

#ifndef DIST_TRAIN_LIB_RUNTIME_SHM_SEGMENT_H_
#define DIST_TRAIN_LIB_RUNTIME_SHM_SEGMENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "dist_train/status.h"

namespace dist_train {

class ShmSegment {
 public:
  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // "/dt-<16 random hex digits>".
  static std::string RandomName();
  // Creates "/dt-<random>" (mode 0600) and returns its name; a name that
  // exists (someone squatting it) is never opened: another is drawn, three
  // times at most.
  Status Create(int ranks, size_t chunk, std::string* name);
  // Creates `name` with O_EXCL (mode 0600): fails when it exists, whoever
  // made it (the caller then falls back to TCP).
  Status CreateNamed(const std::string& name, int ranks, size_t chunk);
  // Maps a segment by name; refused unless this user owns it, nobody else
  // may open it (mode 0600) and its size fits.
  Status Open(const std::string& name, int ranks, size_t chunk);
  void Unlink();  // rank 0, once every rank mapped it
  void Reset();   // unmap

  // `rank`'s line for barrier epochs of parity `set`: its tag (the barrier
  // counter) and payload. A rank waiting at a barrier reads every tag, so
  // the payloads arrive with the barrier, in one round of cache misses,
  // not two. One line: vectors of 2-5 tagged lines were slower this way
  // than through the slots (2 ranks, 128 B: 0.26-0.43 us against 0.17-0.18
  // us; 64 B 0.19-0.21 against 0.17-0.19), while up to 56 B one line beats
  // a slot (4-16 B: 0.15 us against 0.17 us; medians of 7 interleaved
  // dt-bench runs).
  static constexpr size_t kLinePayload = 56;
  std::atomic<uint64_t>* tag(int rank, int set) const;
  char* line_payload(int rank, int set) const;
  std::atomic<uint32_t>* wake() const;
  // How many ranks sleep on wake() (same cache line): the last rank at a
  // barrier makes the wake-up syscall only when someone sleeps.
  std::atomic<uint32_t>* sleepers() const;
  // Every rank's arrivals at barriers so far (same cache line), counted
  // where the ranks outnumber the CPUs: epoch e is complete once it
  // reaches e x ranks, one load for a waiter instead of a look at every
  // rank's tag.
  std::atomic<uint64_t>* arrivals() const;
  // Two sets of slots and result areas, used by alternate chunks.
  char* slot(int set, int rank) const;
  char* result(int set) const;
  size_t chunk() const { return chunk_; }
  bool mapped() const { return base_ != nullptr; }

  static size_t Bytes(int ranks, size_t chunk);

 private:
  Status Map(int fd, int ranks, size_t chunk);
  char* base_ = nullptr;
  size_t bytes_ = 0, chunk_ = 0;
  int ranks_ = 0;
  bool exists_ = false;  // the last CreateNamed found the name taken
  std::string name_;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_SHM_SEGMENT_H_
