// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// MemoryRing: one byte queue per rank (what its previous rank sent), a
// mutex and a condition variable. Sends never block (the queue grows), so
// a ring of exchanges cannot wait in a cycle, as on the TCP ring.

#include "testing/memory_ring.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>

#include "runtime/wire.h"

namespace dist_train {

struct MemoryRing::Shared {
  MemoryRingOptions options;
  std::mutex mu;
  std::condition_variable arrived;
  std::vector<std::deque<char>> inbox;  // inbox[r]: bytes for rank r
  std::vector<bool> broken;
};

namespace {

class MemoryLink : public RingLink {
 public:
  MemoryLink(std::shared_ptr<MemoryRing::Shared> shared, int rank)
      : shared_(std::move(shared)), rank_(rank) {}
  int size() const override { return static_cast<int>(shared_->inbox.size()); }
  int rank() const override { return rank_; }

  Status Exchange(const char* sbuf, size_t slen, char* rbuf, size_t rlen,
                  const std::function<void(size_t)>& on_recv) override {
    std::unique_lock<std::mutex> lock(shared_->mu);
    if (shared_->broken[rank_])
      return Status::Unavailable("rank " + std::to_string(rank_) +
                                 " is broken");
    std::deque<char>& out = shared_->inbox[(rank_ + 1) % size()];
    out.insert(out.end(), sbuf, sbuf + slen);
    shared_->arrived.notify_all();
    return Receive(&lock, rbuf, rlen, on_recv);
  }

 private:
  Status Receive(std::unique_lock<std::mutex>* lock, char* rbuf, size_t rlen,
                 const std::function<void(size_t)>& on_recv) {
    const int prev = (rank_ + size() - 1) % size();
    std::deque<char>& in = shared_->inbox[rank_];
    Deadline deadline = DeadlineIn(shared_->options.timeout_seconds);
    for (size_t got = 0; got < rlen;) {
      if (in.empty() && shared_->broken[prev])
        return Status::Unavailable("rank " + std::to_string(prev) +
                                   " closed the connection (died?)");
      if (in.empty()) {
        if (shared_->arrived.wait_until(*lock, deadline) ==
                std::cv_status::timeout &&
            in.empty())
          return Status::Timeout("rank " + std::to_string(rank_) +
                                 ": no bytes from rank " +
                                 std::to_string(prev));
        continue;
      }
      size_t k = std::min({rlen - got, in.size(), shared_->options.piece});
      std::copy(in.begin(), in.begin() + k, rbuf + got);
      in.erase(in.begin(), in.begin() + k);
      got += k;
      if (on_recv) {
        lock->unlock();  // as over a socket: reduce outside the wait
        on_recv(got);
        lock->lock();
      }
    }
    return Status::OK();
  }

  std::shared_ptr<MemoryRing::Shared> shared_;
  int rank_;
};

}  // namespace

MemoryRing::MemoryRing(int size, MemoryRingOptions options)
    : shared_(std::make_shared<Shared>()) {
  shared_->options = options;
  shared_->inbox.resize(size);
  shared_->broken.assign(size, false);
  for (int r = 0; r < size; ++r)
    links_.push_back(std::make_unique<MemoryLink>(shared_, r));
}

MemoryRing::~MemoryRing() = default;

void MemoryRing::Break(int rank) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->broken[rank] = true;
  shared_->inbox[(rank + 1) % size()].clear();
  shared_->arrived.notify_all();
}

}  // namespace dist_train
