// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The host-memory transports of a connected communicator and the one
// place the choice among them is made.

#include <memory>
#include <string>

#include "runtime/communicator_impl.h"
#include "runtime/ring_collectives.h"

namespace dist_train {

namespace {

// Nothing to exchange: HostTransport copies and divides by one.
class SingleRankTransport : public HostTransport {
 public:
  SingleRankTransport() : HostTransport(0, 1) {}
  std::string Describe() const override { return "single rank"; }

 protected:
  Status AllReduceInPlace(char*, size_t, DataType, ReduceOp) override {
    return Status::OK();
  }
  Status ReduceScatterInto(const char*, char*, size_t, DataType,
                           ReduceOp) override {
    return Status::OK();
  }
  Status AllGatherInPlace(char*, size_t) override { return Status::OK(); }
  Status BroadcastBytes(char*, size_t, int) override { return Status::OK(); }
};

// Every rank on this machine: the shared-memory segment's collectives.
class ShmTransport : public HostTransport {
 public:
  explicit ShmTransport(CommunicatorImpl* comm)
      : HostTransport(comm->rank, comm->size), comm_(comm) {}
  std::string Describe() const override { return "shared memory " + Ranks(); }

 protected:
  Status AllReduceInPlace(char* buf, size_t count, DataType type,
                          ReduceOp op) override {
    return comm_->ShmReduce(buf, count, type, op, buf, 0, count);
  }
  Status ReduceScatterInto(const char* send, char* recv, size_t count,
                           DataType type, ReduceOp op) override {
    const size_t lo = count * rank();
    return comm_->ShmReduce(send, count * size(), type, op, recv, lo,
                            lo + count);
  }
  Status AllGatherInPlace(char* buf, size_t piece) override {
    return comm_->ShmAllGather(buf, piece);
  }
  Status BroadcastBytes(char* buf, size_t bytes, int root) override {
    return comm_->ShmBroadcast(buf, bytes, root);
  }

 private:
  CommunicatorImpl* comm_;
};

// Several machines with several ranks each: all-reduce through shared
// memory to each machine's leader, a ring among the leaders and shared
// memory back; the other collectives on the ring of all ranks.
class HierarchicalTransport : public RingTransport {
 public:
  explicit HierarchicalTransport(CommunicatorImpl* comm)
      : RingTransport(comm->AllRanks(), "tcp ring"), comm_(comm) {}
  std::string Describe() const override {
    return "shared memory within " + std::to_string(comm_->leaders.size()) +
           " machines, tcp ring between them " + Ranks();
  }

 protected:
  Status AllReduceInPlace(char* buf, size_t count, DataType type,
                          ReduceOp op) override {
    return HierarchicalAllReduce(comm_, buf, count, type, op);
  }

 private:
  CommunicatorImpl* comm_;
};

}  // namespace

std::unique_ptr<Transport> MakeHostTransport(CommunicatorImpl* comm) {
  if (comm->size == 1) return std::make_unique<SingleRankTransport>();
  if (comm->hierarchical) return std::make_unique<HierarchicalTransport>(comm);
  if (comm->shm.mapped()) return std::make_unique<ShmTransport>(comm);
  return std::make_unique<RingTransport>(comm->AllRanks(), "tcp ring");
}

}  // namespace dist_train
