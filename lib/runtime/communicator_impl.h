// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The communicator's state and the internals its files share: a star of
// control connections to rank 0 (rendezvous, failure notices; bootstrap.cc
// and communicator.cc), a ring of data connections (TcpRingLink;
// tcp_ring.cc), shared memory among the ranks of one machine
// (shm_collectives.cc), and the transports over them (transport.h;
// host_transports.cc), one chosen at Create. Not installed: users see only
// the forward declaration in dist_train/runtime.h.

#ifndef DIST_TRAIN_LIB_RUNTIME_COMMUNICATOR_IMPL_H_
#define DIST_TRAIN_LIB_RUNTIME_COMMUNICATOR_IMPL_H_

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist_train/runtime.h"
#include "runtime/handshake.h"
#include "runtime/nccl_backend.h"
#include "runtime/shm_segment.h"
#include "runtime/spin_policy.h"
#include "runtime/transport.h"
#include "runtime/wire.h"
#include "runtime/yield_policy.h"

namespace dist_train {

class CommunicatorImpl;

// A ring of TCP connections (all ranks, or the machines' leaders) as a
// RingLink: both directions at once without blocking, sleeping in poll()
// beside the control connections, whose failure notices end it.
class TcpRingLink : public RingLink {
 public:
  TcpRingLink(CommunicatorImpl* comm, Conn* next, Conn* prev, int size,
              int rank, std::vector<char>* scratch)
      : RingLink(scratch),
        comm_(comm),
        next_(next),
        prev_(prev),
        size_(size),
        rank_(rank) {}
  int size() const override { return size_; }
  int rank() const override { return rank_; }
  using RingLink::Exchange;
  Status Exchange(const char* sbuf, size_t slen, char* rbuf, size_t rlen,
                  const std::function<void(size_t)>& on_recv) override;

 private:
  CommunicatorImpl* comm_;
  Conn* next_;
  Conn* prev_;
  int size_, rank_;
};

class CommunicatorImpl {
 public:
  ~CommunicatorImpl();

  // ---- failure plane (communicator.cc) ----
  void Log(const std::string& msg) const;
  // Records the first failure, tells every peer, and returns it; every
  // later call fails with it.
  Status Fail(const Status& status);
  Status CheckCtrl(size_t index);
  Status PollCtrl();
  // Adds one POLLIN entry per control connection (-1 for closed ones).
  void WatchCtrl(std::vector<pollfd>* fds) const;
  // CheckCtrl for each control connection readable in fds[first + i].
  Status HandleCtrl(const std::vector<pollfd>& fds, size_t first);
  // Rank 0, when its first failure was a rank's machine that stopped
  // answering and the job asked for node-loss=requeue: gathers the other
  // ranks lost at the same time, names their nodes and requeues the job
  // without them (runtime/node_loss.h).
  void AfterLoss();

  // ---- NCCL set-up (tcp_ring.cc) ----
  // The NCCL communicator as a transport, made at the first device buffer.
  Status Nccl(Transport** out);

  // ---- tcp ring (tcp_ring.cc) ----
  // The rings of all ranks and of the machines' leaders (after Create).
  RingLink* AllRanks() { return ring.get(); }
  RingLink* Leaders() { return leader_ring.get(); }
  // The leaders' ring position of this rank (-1: not a leader).
  int LeaderIndex() const;
  Status DataError(const Status& status);

  // ---- shared memory (shm_collectives.cc) ----
  Status ShmBarrier(bool patient = false);
  bool ShmBarrierDone();
  uint64_t ShmArrivalsAtEpoch() const;
  void WakeSleepers();
  Status ShmReduceInLine(const char* src, size_t count, DataType type,
                         ReduceOp op, char* out, size_t out_lo, size_t out_hi);
  // Chunk by chunk through shared memory: every local rank's `src` (count
  // elements) reduced; elements [out_lo, out_hi) of the result go to `out`
  // (out[0] is element out_lo; `out` may be `src`).
  Status ShmReduce(const char* src, size_t count, DataType type, ReduceOp op,
                   char* out, size_t out_lo, size_t out_hi);
  Status ShmReduceSmall(const char* src, size_t count, DataType type,
                        ReduceOp op, char* out, size_t out_lo, size_t out_hi);
  void ShmReduceShare(int set, const char* mine, size_t lo, size_t hi,
                      DataType type, ReduceOp op);
  // Local rank `from`'s buf to every local rank. `patient`: the first wait
  // has no deadline of its own (the leader may spend long on the network;
  // its own deadline and the control connections end it on failures).
  Status ShmBroadcast(char* buf, size_t bytes, int from, bool patient = false);
  // buf holds one piece per local rank, ours filled; fills the others.
  Status ShmAllGather(char* buf, size_t piece);

  Options opt;
  Credentials cred;
  int rank = 0, size = 1;
  std::vector<Conn> ctrl;         // rank 0: one per rank; others: ctrl[0]
  std::vector<bool> left;         // rank 0: ranks that said goodbye
  std::vector<std::string> addr;  // every rank's data address "ip:port"
  Conn next, prev;
  int data_fd = -1;
  // This machine's ranks (ascending; the first is its leader) and my index
  // among them, and every machine's leader. With ranks on several machines
  // and several on one, all-reduce is hierarchical: shared memory inside a
  // machine, a TCP ring among the leaders (leader_next/leader_prev).
  std::vector<int> local_ranks, leaders;
  int local_rank = 0;
  bool hierarchical = false;
  Conn leader_next, leader_prev;
  std::unique_ptr<TcpRingLink> ring, leader_ring;
  int shm_set = 0;      // the shared-memory buffer set of the next chunk
  std::string failure;  // set once: every later call fails with it
  bool requeue_lost_nodes = false;  // DT_NODE_LOSS=requeue
  std::vector<int> lost_ranks;      // rank 0: ranks whose machine was lost
  ShmSegment shm;  // this machine's ranks, when there are several
  uint64_t shm_epoch = 0;
  // More ranks on this machine than it has CPUs: barrier waiters yield to
  // each other instead of spinning long.
  bool shm_oversubscribed = false;
  // When an oversubscribed barrier waiter yields, when it sleeps.
  YieldPolicy yield_policy;
  // How long a barrier waiter sleeps between looks for failure notices.
  NapSchedule naps{1, 1};
  // How long a barrier waiter with a CPU of its own spins.
  SpinPolicy spin_policy;
  // Small socket transfers spin before they sleep (SocketSpinPays).
  bool socket_spin = false;
  std::unique_ptr<NcclBackend> nccl;  // made at the first device buffer
  std::vector<char> scratch;          // the rings' RingLink::Scratch
  // Host-memory collectives (MakeHostTransport, at Create).
  std::unique_ptr<Transport> host;
};

// ---- bootstrap.cc ----

// The host part of a data address "ip:port".
std::string HostOf(const std::string& peer);
// The address this rank's listening sockets are bound to: DT_SOCKET_ADDR
// (Options::local_addr), else for rank 0 the address MASTER_ADDR names
// when it is one of ours, for the others the local address that reaches
// it ("127.0.0.1" when MASTER_ADDR is loopback); "" = every address.
Status JobAddress(const Options& opt, int rank, std::string* addr);
// Every rank's control connection to rank 0 and the table of data addresses
// (rank 0 serves it on MASTER_PORT or the next candidates, on `bind_addr`;
// the others join).
Status Rendezvous(CommunicatorImpl* comm, int data_port,
                  const std::string& bind_addr, Deadline deadline);
// Connects to `next_rank` and accepts `prev_rank` (both authenticated).
Status ConnectRing(CommunicatorImpl* comm, int next_rank, int prev_rank,
                   Conn* next, Conn* prev, Deadline deadline);
// Fills local_ranks, local_rank and leaders from the address table.
void GroupByHost(CommunicatorImpl* comm);
// The ring among the machines' leaders (hierarchical all-reduce).
Status ConnectLeaderRing(CommunicatorImpl* comm);

// ---- tcp_ring.cc ----

// Whether small socket transfers should spin before sleeping: this
// process may run on more than one CPU and this machine has more CPUs than
// its `local_ranks`.
bool SocketSpinPays(int local_ranks);

// ---- shm_collectives.cc ----

// Maps the shared-memory segment of this machine's ranks when several share
// it, and decides whether all-reduce is hierarchical.
Status SetupShm(CommunicatorImpl* comm);
// In place; every rank, when all-reduce is hierarchical.
Status HierarchicalAllReduce(CommunicatorImpl* comm, char* buf, size_t count,
                             DataType type, ReduceOp op);

// ---- host_transports.cc ----

// The host transport of a connected communicator: a single rank, shared
// memory (every rank on this machine), shared memory within machines under
// a ring of their leaders (all-reduce; the rest on the ring of all ranks),
// or the TCP ring.
std::unique_ptr<Transport> MakeHostTransport(CommunicatorImpl* comm);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_COMMUNICATOR_IMPL_H_
