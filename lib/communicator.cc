// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The CPU communicator: a star of control connections to rank 0 (rendezvous,
// failure notices) and a ring of data connections (collectives).

#include <linux/futex.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "dist_train/runtime.h"
#include "handshake.h"
#include "nccl_backend.h"
#include "reduce.h"
#include "runtime_env.h"
#include "shm_segment.h"
#include "wire.h"

namespace dist_train {

struct Communicator::Impl {
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
  // machine, a TCP ring among the leaders (lnext/lprev).
  std::vector<int> local, leaders;
  int local_rank = 0;
  bool hierarchical = false;
  Conn lnext, lprev;
  int shm_set = 0;      // the shared-memory buffer set of the next chunk
  std::string failure;  // set once: every later call fails with it
  ShmSegment shm;       // this machine's ranks, when there are several
  uint64_t shm_epoch = 0;
  std::unique_ptr<NcclBackend> nccl;  // made at the first device buffer

  ~Impl();
  void Log(const std::string& msg) const;
  Status Fail(const Status& s);
  Status CheckCtrl(size_t index);
  Status DataError(const Status& s);
  // Sends sbuf to the next rank while receiving rbuf from the previous one;
  // `on_recv(bytes so far)` runs whenever more arrived (e.g. to reduce what
  // is complete while the rest is still on the wire).
  // A receive buffer of at least `bytes`, kept between collectives: a fresh
  // one per call costs page faults and zeroing (large ones are mmapped).
  char* Scratch(size_t bytes) {
    if (scratch.size() < bytes) scratch.resize(bytes);
    return scratch.data();
  }
  std::vector<char> scratch;
  // A ring to run a collective on: all ranks, or the machines' leaders.
  struct Ring {
    Conn* next;
    Conn* prev;
    int size, rank;
  };
  Ring AllRanks() { return Ring{&next, &prev, size, rank}; }
  Ring Leaders();
  Status Exchange(const Ring& ring, const char* sbuf, size_t slen, char* rbuf,
                  size_t rlen,
                  const std::function<void(size_t)>& on_recv = nullptr);
  Status Exchange(const char* sbuf, size_t slen, char* rbuf, size_t rlen) {
    return Exchange(AllRanks(), sbuf, slen, rbuf, rlen);
  }
  Status ShmBarrier(bool patient = false);
  // Every rank of this one machine shares the segment (no other machines).
  bool OneMachineShm() const {
    return size > 1 && shm.mapped() && !hierarchical;
  }
  // Chunk by chunk through shared memory: every local rank's `src` (count
  // elements) reduced; elements [out_lo, out_hi) of the result go to `out`
  // (out[0] is element out_lo; `out` may be `src`).
  Status ShmReduce(const char* src, size_t count, DataType type, ReduceOp op,
                   char* out, size_t out_lo, size_t out_hi);
  // Local rank `from`'s buf to every local rank. `patient`: the first wait
  // has no deadline of its own (the leader may spend long on the network;
  // its own deadline and the control connections end it on failures).
  Status ShmBroadcast(char* buf, size_t bytes, int from, bool patient = false);
  // buf holds one piece per local rank, ours filled; fills the others.
  Status ShmAllGather(char* buf, size_t piece);
  Status PollCtrl();
  Status Nccl(NcclBackend** out);
  // Runs `op` on the NCCL communicator, making it first if needed.
  template <typename Op>
  Status WithNccl(Op op) {
    NcclBackend* n = nullptr;
    DT_RETURN_IF_ERROR(Nccl(&n));
    return op(n);
  }
};

Status SetupShm(Communicator::Impl* c);

namespace {

constexpr double kPeerHandshakeSeconds = 5;
constexpr size_t kBroadcastChunk = 1 << 20;
constexpr size_t kPipelinePiece = 1 << 20;

Deadline Soon(Deadline d, double seconds) {
  return std::min(d, DeadlineIn(seconds));
}

std::string Host(const std::string& peer) {
  return peer.substr(0, peer.rfind(':'));
}

int Mod(int a, int n) { return ((a % n) + n) % n; }

Status ServeRendezvous(Communicator::Impl* c, int data_port, Deadline d) {
  int lfd = -1, port = 0;
  Status st;
  for (int k = 0; k < c->opt.port_candidates; ++k) {
    st = Listen(c->opt.master_port + k, &lfd, &port);
    if (st.ok()) break;
    c->Log(st.message() +
           (k + 1 < c->opt.port_candidates ? "; trying the next port" : ""));
  }
  if (!st.ok()) return st;
  c->ctrl.resize(c->size);
  c->left.assign(c->size, false);
  c->addr.assign(c->size, "");
  c->addr[0] = c->opt.master_addr + ":" + std::to_string(data_port);
  // Several handshakes at once: each waits for its peer's answer, and with
  // hundreds of ranks on a few cores those waits add up if taken in turn.
  std::mutex mu;
  int joined = 1;
  auto serve = [&] {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (joined == c->size) return;
      }
      if (Clock::now() >= d) return;
      Conn conn;
      if (!Accept(lfd, Soon(d, 0.05), &conn).ok()) continue;
      ServerSide ss;
      JoinInfo j;
      Deadline pd = Soon(d, kPeerHandshakeSeconds);
      Status hs = SendHello(&conn, c->cred, pd, &ss);
      if (hs.ok()) hs = CheckJoin(&conn, c->cred, ss, c->size, -1, pd, &j);
      std::lock_guard<std::mutex> lock(mu);
      if (hs.ok() && c->ctrl[j.rank].valid())
        hs = Status::PermissionDenied(conn.peer() + " claims rank " +
                                      std::to_string(j.rank) +
                                      ", which already joined");
      if (!hs.ok()) {
        c->Log(hs.message());
        continue;
      }
      c->addr[j.rank] = Host(conn.peer()) + ":" + std::to_string(j.data_port);
      if (joined == 1) {  // rank 0 as its peers reach it (an address)
        std::string me = c->opt.local_addr.empty() ? LocalAddress(conn.fd())
                                                   : c->opt.local_addr;
        if (!me.empty()) c->addr[0] = me + ":" + std::to_string(data_port);
      }
      conn.set_peer("rank " + std::to_string(j.rank) + " (" +
                    Host(conn.peer()) + ")");
      c->ctrl[j.rank] = std::move(conn);
      // The last one: wake the helpers waiting in accept.
      if (++joined == c->size) shutdown(lfd, SHUT_RDWR);
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < std::min(8, c->size - 1); ++t)
    helpers.emplace_back(serve);
  serve();
  for (std::thread& t : helpers) t.join();
  if (joined < c->size) {
    std::string missing;
    for (int r = 1; r < c->size; ++r)
      if (!c->ctrl[r].valid())
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    close(lfd);
    return Status::Timeout(
        "rendezvous on port " + std::to_string(port) + ": ranks " + missing +
        " did not arrive within " +
        std::to_string(static_cast<int>(c->opt.timeout_seconds)) + " s");
  }
  close(lfd);
  std::string table;
  for (const std::string& a : c->addr) PutString(&table, a);
  for (int r = 1; r < c->size; ++r)
    DT_RETURN_IF_ERROR(c->ctrl[r].SendFrame(FrameType::kTable, table, d));
  return Status::OK();
}

Status JoinRendezvous(Communicator::Impl* c, int data_port, Deadline d) {
  JoinInfo me{static_cast<uint32_t>(c->rank), static_cast<uint32_t>(c->size),
              static_cast<uint32_t>(data_port)};
  auto backoff = std::chrono::milliseconds(2);
  while (Clock::now() < d) {
    for (int k = 0; k < c->opt.port_candidates; ++k) {
      Conn conn;
      Status cs_st = ConnectOnce(c->opt.master_addr, c->opt.master_port + k,
                                 1.0, &conn, c->opt.local_addr);
      // A name that does not resolve, or a local address we cannot use,
      // will not get better by waiting.
      if (cs_st.code() == Status::Code::kInvalidArgument) return cs_st;
      if (!cs_st.ok()) continue;
      ClientSide cs;
      Deadline pd = Soon(d, kPeerHandshakeSeconds);
      Status st = SendJoin(&conn, c->cred, me, pd, &cs);
      if (st.ok()) st = ReadAccept(&conn, c->cred, me, &cs, pd);
      if (st.ok()) {
        conn.set_peer("rank 0 (" + c->opt.master_addr + ")");
        c->ctrl.resize(1);
        c->ctrl[0] = std::move(conn);
        FrameType type;
        std::string table;
        DT_RETURN_IF_ERROR(c->ctrl[0].RecvFrame(&type, &table, d, 1 << 24));
        size_t pos = 0;
        c->addr.assign(c->size, "");
        for (std::string& a : c->addr) {
          if (type != FrameType::kTable || !GetString(table, &pos, 512, &a))
            return Status::Internal("rank 0 sent a malformed address table");
        }
        return Status::OK();
      }
      if (!cs.foreign) return st;  // e.g. refused for a wrong secret: final
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(100));
  }
  return Status::Timeout(
      "no rank 0 of job '" + c->cred.identity + "' at " + c->opt.master_addr +
      ":" + std::to_string(c->opt.master_port) + "+" +
      std::to_string(c->opt.port_candidates - 1) + " within " +
      std::to_string(static_cast<int>(c->opt.timeout_seconds)) + " s");
}

// Connects to `next_rank` and accepts `prev_rank` (both authenticated).
Status ConnectRing(Communicator::Impl* c, int next_rank, int prev_rank,
                   Conn* next, Conn* prev, Deadline d) {
  const std::string& a = c->addr[next_rank];
  std::string host = a.substr(0, a.rfind(':'));
  int port = std::atoi(a.substr(a.rfind(':') + 1).c_str());
  Status st;
  while (!(st = ConnectOnce(host, port, 1.0, next, c->opt.local_addr)).ok()) {
    if (Clock::now() >= d)
      return Status::Timeout("cannot reach rank " + std::to_string(next_rank) +
                             " at " + a + ": " + st.message());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  next->set_peer("rank " + std::to_string(next_rank) + " (" + host + ")");
  ServerSide ss;
  DT_RETURN_IF_ERROR(Accept(c->data_fd, d, prev));
  DT_RETURN_IF_ERROR(SendHello(prev, c->cred, d, &ss));
  ClientSide cs;
  JoinInfo me{static_cast<uint32_t>(c->rank), static_cast<uint32_t>(c->size),
              0};
  DT_RETURN_IF_ERROR(SendJoin(next, c->cred, me, d, &cs));
  JoinInfo j;
  while (!(st = CheckJoin(prev, c->cred, ss, c->size, prev_rank,
                          Soon(d, kPeerHandshakeSeconds), &j))
              .ok()) {
    c->Log(st.message());
    DT_RETURN_IF_ERROR(Accept(c->data_fd, d, prev));
    DT_RETURN_IF_ERROR(SendHello(prev, c->cred, d, &ss));
  }
  prev->set_peer("rank " + std::to_string(prev_rank) + " (" +
                 Host(prev->peer()) + ")");
  return ReadAccept(next, c->cred, me, &cs, d);
}

size_t SegmentStart(size_t count, int n, int i);

size_t SegmentStart(size_t count, int n, int i) {
  return count * static_cast<size_t>(i) / static_cast<size_t>(n);
}

}  // namespace

Communicator::Impl::~Impl() {
  // Say goodbye so peers do not take this disconnect for a failure.
  for (Conn& c : ctrl) {
    if (c.valid()) c.SendFrame(FrameType::kBye, "", DeadlineIn(0.2));
  }
  if (data_fd >= 0) close(data_fd);
}

void Communicator::Impl::Log(const std::string& msg) const {
  fprintf(stderr, "dist-train: rank %d: %s\n", rank, msg.c_str());
}

Status Communicator::Impl::Fail(const Status& s) {
  if (failure.empty()) {
    failure = s.message();
    Log(failure);
    for (size_t i = 0; i < ctrl.size(); ++i) {
      if (ctrl[i].valid() && !(rank == 0 && left[i]))
        ctrl[i].SendFrame(FrameType::kAbort, failure, DeadlineIn(0.5));
    }
  }
  return Status::Unavailable(failure);
}

// A control socket is readable: an abort notice, a goodbye, or a death.
Status Communicator::Impl::CheckCtrl(size_t i) {
  FrameType type;
  std::string msg;
  Status st = ctrl[i].RecvFrame(&type, &msg, DeadlineIn(1));
  if (st.ok() && type == FrameType::kBye) {
    if (rank == 0) left[i] = true;
    ctrl[i].Close();
    return Status::OK();
  }
  if (st.ok() && type == FrameType::kAbort)
    return Fail(Status::Unavailable(msg));
  return Fail(Status::Unavailable(
      ctrl[i].peer() +
      " failed: " + (st.ok() ? "unexpected message" : st.message())));
}

// A data connection broke. A neighbour's failure often shows up here first
// as a consequence (its process exited after the real failure): give the
// control connections a moment to deliver the root cause.
Status Communicator::Impl::DataError(const Status& s) {
  Deadline d = DeadlineIn(0.25);
  while (failure.empty() && Clock::now() < d) {
    std::vector<pollfd> fds;
    for (const Conn& c : ctrl)
      fds.push_back({c.valid() ? c.fd() : -1, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 20) <= 0) continue;
    for (size_t i = 0; i < ctrl.size() && failure.empty(); ++i) {
      if (fds[i].revents) CheckCtrl(i);
    }
  }
  return Fail(s);
}

Communicator::Impl::Ring Communicator::Impl::Leaders() {
  int me = static_cast<int>(std::find(leaders.begin(), leaders.end(), rank) -
                            leaders.begin());
  return Ring{&lnext, &lprev, static_cast<int>(leaders.size()), me};
}

Status Communicator::Impl::Exchange(
    const Ring& ring, const char* sbuf, size_t slen, char* rbuf, size_t rlen,
    const std::function<void(size_t)>& on_recv) {
  if (!failure.empty()) return Status::Unavailable(failure);
  Conn& to = *ring.next;
  Conn& from = *ring.prev;
  Deadline d = DeadlineIn(opt.timeout_seconds);
  size_t sent = 0, got = 0;
  while (sent < slen || got < rlen) {
    // Try both directions first; poll only when neither can move, so bulk
    // transfers cost one syscall per chunk, not two.
    bool progress = false;
    if (sent < slen) {
      ssize_t k =
          send(to.fd(), sbuf + sent, std::min<size_t>(slen - sent, 1 << 22),
               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k > 0) {
        sent += static_cast<size_t>(k), progress = true;
      } else if (k < 0 && errno != EAGAIN && errno != EINTR) {
        return DataError(Status::Unavailable(to.peer() + " is gone (" +
                                             strerror(errno) + ")"));
      }
    }
    if (got < rlen) {
      ssize_t k = recv(from.fd(), rbuf + got, rlen - got, MSG_DONTWAIT);
      if (k > 0) {
        got += static_cast<size_t>(k), progress = true;
        if (on_recv) on_recv(got);
      } else if (k == 0) {
        return DataError(Status::Unavailable(from.peer() +
                                             " closed the connection (died?)"));
      } else if (errno != EAGAIN && errno != EINTR) {
        return DataError(Status::Unavailable(from.peer() + " is gone (" +
                                             strerror(errno) + ")"));
      }
    }
    if (progress) continue;  // finish what buffered data allows first
    std::vector<pollfd> fds = {
        {to.fd(), static_cast<short>(sent < slen ? POLLOUT : 0), 0},
        {from.fd(), static_cast<short>(got < rlen ? POLLIN : 0), 0}};
    for (const Conn& c : ctrl)
      fds.push_back({c.valid() ? c.fd() : -1, POLLIN, 0});
    auto left_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(d - Clock::now())
            .count();
    int n = poll(fds.data(), fds.size(),
                 static_cast<int>(std::max<int64_t>(left_ms, 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Fail(Status::Timeout(
          "rank " + std::to_string(rank) + ": no progress for " +
          std::to_string(static_cast<int>(opt.timeout_seconds)) +
          " s waiting on " + (got < rlen ? from.peer() : to.peer())));
    }
    if (fds[0].revents || fds[1].revents) continue;  // data first
    for (size_t i = 0; i < ctrl.size(); ++i) {
      if (fds[2 + i].revents) DT_RETURN_IF_ERROR(CheckCtrl(i));
    }
  }
  return Status::OK();
}

// Handles whatever the control connections have ready, without waiting.
Status Communicator::Impl::PollCtrl() {
  if (!failure.empty()) return Status::Unavailable(failure);
  std::vector<pollfd> fds;
  for (const Conn& c : ctrl)
    fds.push_back({c.valid() ? c.fd() : -1, POLLIN, 0});
  if (poll(fds.data(), fds.size(), 0) > 0) {
    for (size_t i = 0; i < ctrl.size(); ++i) {
      if (fds[i].revents) DT_RETURN_IF_ERROR(CheckCtrl(i));
    }
  }
  return Status::OK();
}

// Spins until every rank reached the next barrier epoch; checks the
// control connections meanwhile so a dead rank is noticed (and named) as
// fast as on the TCP path.
namespace {

int* FutexWord(std::atomic<uint32_t>* word) {
  return reinterpret_cast<int*>(word);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Sleeps while the word still holds `seen` (at most 10 ms, so failures are
// still polled for).
void FutexWait(std::atomic<uint32_t>* word, uint32_t seen) {
  timespec ts{0, 10 * 1000 * 1000};
  syscall(SYS_futex, FutexWord(word), FUTEX_WAIT, static_cast<int>(seen), &ts,
          nullptr, 0);
}

}  // namespace

// Each rank bumps its own counter; whoever sees every counter at the new
// epoch bumps the wake word and wakes the sleepers. A waiter spins briefly
// (the common case when every rank has its own core), then sleeps on the
// wake word, leaving shared cores to the ranks still working.
Status Communicator::Impl::ShmBarrier(bool patient) {
  if (!failure.empty()) return Status::Unavailable(failure);
  ++shm_epoch;
  shm.counter(local_rank)->store(shm_epoch, std::memory_order_seq_cst);
  Deadline d = DeadlineIn(opt.timeout_seconds);
  const int n = static_cast<int>(local.size());
  auto last_poll = Clock::now();
  for (uint64_t spin = 0;; ++spin) {
    // Read the wake word before the counters: a wake-up after this read
    // changes it, so the futex wait below cannot miss it.
    uint32_t seen = shm.wake()->load(std::memory_order_seq_cst);
    bool all = true;
    for (int r = 0; r < n && all; ++r)
      all = shm.counter(r)->load(std::memory_order_seq_cst) >= shm_epoch;
    if (all) {
      shm.wake()->fetch_add(1, std::memory_order_seq_cst);
      FutexWakeAll(shm.wake());
      return Status::OK();
    }
    // Failures come on the control connections: look every 64 spins, and
    // every 2 ms once sleeping.
    if (spin % 64 == 63 || (spin >= 64 && Clock::now() - last_poll >
                                              std::chrono::milliseconds(2))) {
      last_poll = Clock::now();
      DT_RETURN_IF_ERROR(PollCtrl());
      if (!patient && Clock::now() > d) {
        return Fail(Status::Timeout(
            "rank " + std::to_string(rank) +
            ": a rank on this machine made no progress for " +
            std::to_string(static_cast<int>(opt.timeout_seconds)) + " s"));
      }
    }
    if (spin < 64)
      sched_yield();
    else
      FutexWait(shm.wake(), seen);
  }
}

// Chunk by chunk: every rank copies its chunk into its slot, reduces its
// 1/n of the chunk across all slots into the result area, and copies what
// it wants of the result out. Alternate chunks use alternate buffer sets,
// so two barriers per chunk suffice: a set is written again two chunks
// later (in any collective), after a barrier every rank reaches only once
// done with it. The same holds for the one-barrier broadcast and gather.
Status Communicator::Impl::ShmReduce(const char* src, size_t count,
                                     DataType type, ReduceOp op, char* out,
                                     size_t out_lo, size_t out_hi) {
  const size_t es = DataTypeSize(type), per_chunk = shm.chunk() / es;
  const int n = static_cast<int>(local.size());
  for (size_t first = 0; first < count; first += per_chunk) {
    const int set = shm_set;
    shm_set ^= 1;
    size_t len = std::min(per_chunk, count - first);
    std::memcpy(shm.slot(set, local_rank), src + first * es, len * es);
    DT_RETURN_IF_ERROR(ShmBarrier());
    size_t lo = SegmentStart(len, n, local_rank),
           hi = SegmentStart(len, n, local_rank + 1);
    if (hi > lo) {
      std::memcpy(shm.result(set) + lo * es, shm.slot(set, 0) + lo * es,
                  (hi - lo) * es);
      for (int r = 1; r < n; ++r) {
        ReduceInto(shm.result(set) + lo * es, shm.slot(set, r) + lo * es,
                   hi - lo, type, op);
      }
    }
    DT_RETURN_IF_ERROR(ShmBarrier());
    size_t a = std::max(first, out_lo), b = std::min(first + len, out_hi);
    if (a < b) {
      std::memcpy(out + (a - out_lo) * es, shm.result(set) + (a - first) * es,
                  (b - a) * es);
    }
  }
  return Status::OK();
}

Status Communicator::Impl::ShmBroadcast(char* buf, size_t bytes, int from,
                                        bool patient) {
  for (size_t first = 0; first < bytes; first += shm.chunk()) {
    const int set = shm_set;
    shm_set ^= 1;
    size_t len = std::min(shm.chunk(), bytes - first);
    if (local_rank == from) std::memcpy(shm.result(set), buf + first, len);
    DT_RETURN_IF_ERROR(ShmBarrier(patient && first == 0));
    if (local_rank != from) std::memcpy(buf + first, shm.result(set), len);
  }
  return Status::OK();
}

Status Communicator::Impl::ShmAllGather(char* buf, size_t piece) {
  const int n = static_cast<int>(local.size());
  for (size_t first = 0; first < piece; first += shm.chunk()) {
    const int set = shm_set;
    shm_set ^= 1;
    size_t len = std::min(shm.chunk(), piece - first);
    std::memcpy(shm.slot(set, local_rank), buf + local_rank * piece + first,
                len);
    DT_RETURN_IF_ERROR(ShmBarrier());
    for (int r = 0; r < n; ++r) {
      if (r != local_rank)
        std::memcpy(buf + r * piece + first, shm.slot(set, r), len);
    }
  }
  return Status::OK();
}

Communicator::Communicator(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;
int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }

std::string Communicator::Describe() const {
  const Impl& c = *impl_;
  if (c.hierarchical) {
    return "shared memory within " + std::to_string(c.leaders.size()) +
           " machines, tcp ring between them (" + std::to_string(c.size) +
           " ranks)";
  }
  if (c.OneMachineShm())
    return "shared memory (" + std::to_string(c.size) + " ranks)";
  if (c.size > 1) return "tcp ring (" + std::to_string(c.size) + " ranks)";
  return "single rank";
}

Status Communicator::Create(const Options& options,
                            std::unique_ptr<Communicator>* out) {
  auto c = std::make_unique<Impl>();
  DT_RETURN_IF_ERROR(ResolveOptions(options, ProcessEnv(), &c->opt));
  c->rank = c->opt.rank;
  c->size = c->opt.world_size;
  c->cred = {c->opt.job_identity, c->opt.job_token};
  Deadline d = DeadlineIn(c->opt.timeout_seconds);
  if (c->size > 1) {
    int data_port = 0;
    DT_RETURN_IF_ERROR(Listen(0, &c->data_fd, &data_port));
    DT_RETURN_IF_ERROR(c->rank == 0 ? ServeRendezvous(c.get(), data_port, d)
                                    : JoinRendezvous(c.get(), data_port, d));
    DT_RETURN_IF_ERROR(ConnectRing(c.get(), (c->rank + 1) % c->size,
                                   Mod(c->rank - 1, c->size), &c->next,
                                   &c->prev, d));
    DT_RETURN_IF_ERROR(SetupShm(c.get()));
  }
  out->reset(new Communicator(std::move(c)));
  return Status::OK();
}

namespace {

// The ring's reduce-scatter: afterwards rank r holds the reduced segment r
// (segment i = elements [start(i), start(i+1))).
Status RingReduceScatter(Communicator::Impl* c,
                         const Communicator::Impl::Ring& ring, char* buf,
                         size_t count, DataType type, ReduceOp op) {
  const int n = ring.size, r = ring.rank;
  const size_t es = DataTypeSize(type);
  char* tmp = c->Scratch((count / n + 1) * es);
  for (int s = 0; s < n - 1; ++s) {
    int si = Mod(r - s - 1, n), ri = Mod(r - s - 2, n);
    size_t s0 = SegmentStart(count, n, si), s1 = SegmentStart(count, n, si + 1);
    size_t r0 = SegmentStart(count, n, ri), r1 = SegmentStart(count, n, ri + 1);
    // The whole segment goes out while the incoming one is reduced piece
    // by piece as it completes, so reducing overlaps the transfer.
    const size_t total = r1 - r0;
    size_t done = 0;
    auto reduce_ready = [&](size_t got) {
      size_t ready = got / es;
      if (ready - done < kPipelinePiece / es && ready != total) return;
      ReduceInto(buf + (r0 + done) * es, tmp + done * es, ready - done, type,
                 op);
      done = ready;
    };
    DT_RETURN_IF_ERROR(c->Exchange(ring, buf + s0 * es, (s1 - s0) * es, tmp,
                                   total * es, reduce_ready));
  }
  return Status::OK();
}

// The ring's all-gather: rank r starts with segment r, ends with all.
Status RingAllGather(Communicator::Impl* c,
                     const Communicator::Impl::Ring& ring, char* buf,
                     size_t count, size_t es) {
  const int n = ring.size, r = ring.rank;
  for (int s = 0; s < n - 1; ++s) {
    int si = Mod(r - s, n), ri = Mod(r - s - 1, n);
    size_t s0 = SegmentStart(count, n, si), s1 = SegmentStart(count, n, si + 1);
    size_t r0 = SegmentStart(count, n, ri), r1 = SegmentStart(count, n, ri + 1);
    DT_RETURN_IF_ERROR(c->Exchange(ring, buf + s0 * es, (s1 - s0) * es,
                                   buf + r0 * es, (r1 - r0) * es));
  }
  return Status::OK();
}

Status RingAllReduce(Communicator::Impl* c,
                     const Communicator::Impl::Ring& ring, char* buf,
                     size_t count, DataType type, ReduceOp op) {
  DT_RETURN_IF_ERROR(RingReduceScatter(c, ring, buf, count, type, op));
  return RingAllGather(c, ring, buf, count, DataTypeSize(type));
}

// Chunks pass along the ring from `root`.
Status RingBroadcast(Communicator::Impl* c, char* p, size_t bytes, int root) {
  if (c->size == 1) return Status::OK();
  bool receives = c->rank != root, sends = (c->rank + 1) % c->size != root;
  for (size_t off = 0; off < bytes; off += kBroadcastChunk) {
    size_t len = std::min(kBroadcastChunk, bytes - off);
    if (receives) DT_RETURN_IF_ERROR(c->Exchange(nullptr, 0, p + off, len));
    if (sends) DT_RETURN_IF_ERROR(c->Exchange(p + off, len, nullptr, 0));
  }
  return Status::OK();
}

}  // namespace

// When every rank is on this machine (and DT_SHM is not 0), all-reduce goes
// through shared memory; if any rank cannot map it, all use the TCP ring.
// Groups the ranks by machine (the host part of their data address). Ranks
// sharing a machine map one shared-memory segment, made by their leader
// (lowest rank) under a name from rank 0's random base; it is unlinked as
// soon as everyone mapped it. DT_SHM=0, or any rank failing to map, leaves
// everything on TCP.
Status SetupShm(Communicator::Impl* c) {
  const std::string my_host = Host(c->addr[c->rank]);
  std::vector<std::string> seen;
  for (int r = 0; r < c->size; ++r) {
    std::string h = Host(c->addr[r]);
    if (h == my_host) c->local.push_back(r);
    if (std::find(seen.begin(), seen.end(), h) == seen.end()) {
      seen.push_back(h);
      c->leaders.push_back(r);
    }
  }
  c->local_rank = static_cast<int>(
      std::find(c->local.begin(), c->local.end(), c->rank) - c->local.begin());
  const int n = static_cast<int>(c->local.size());
  if (c->leaders.size() == static_cast<size_t>(c->size)) return Status::OK();
  // 1 MiB per slot: 4 ranks' two sets stay in cache (measured best among
  // 128 KiB-16 MiB for 64 MiB all-reduces on 4 ranks).
  size_t chunk =
      std::max<size_t>(64 << 10, std::min<size_t>(1 << 20, (64 << 20) / n)) &
      ~size_t{63};
  // Rank 0's random base name reaches everyone (a chain along the ring, as
  // cheap as it gets with hundreds of ranks on one machine); each leader
  // makes "<base>.<its rank>"; once all did, the others map theirs.
  // Rank 0 decides (DT_SHM=0 there: none), so no rank takes another path.
  char base[64] = {0};
  const char* env = getenv("DT_SHM");
  if (c->rank == 0 && !(env != nullptr && std::string(env) == "0"))
    snprintf(base, sizeof(base), "%s", ShmSegment::RandomName().c_str());
  DT_RETURN_IF_ERROR(RingBroadcast(c, base, sizeof(base), 0));
  if (base[0] == '\0') return Status::OK();
  const std::string name = std::string(base, strnlen(base, sizeof(base))) +
                           "." + std::to_string(c->local[0]);
  bool leader = c->local_rank == 0;
  if (leader && n > 1) {
    Status s = c->shm.CreateNamed(name, n, chunk);
    if (!s.ok()) c->Log("no shared memory (" + s.message() + "); using TCP");
  }
  int32_t ok = !leader || n == 1 || c->shm.mapped() ? 1 : 0;
  DT_RETURN_IF_ERROR(RingAllReduce(c, c->AllRanks(),
                                   reinterpret_cast<char*>(&ok), 1,
                                   DataType::kInt32, ReduceOp::kMin));
  if (ok && !leader && n > 1) {
    Status s = c->shm.Open(name, n, chunk);
    if (!s.ok()) c->Log("no shared memory (" + s.message() + "); using TCP");
  }
  int32_t all = ok && (n == 1 || c->shm.mapped()) ? 1 : 0;
  DT_RETURN_IF_ERROR(RingAllReduce(c, c->AllRanks(),
                                   reinterpret_cast<char*>(&all), 1,
                                   DataType::kInt32, ReduceOp::kMin));
  if (leader) c->shm.Unlink();  // everyone mapped it (or gave up)
  if (!all) {
    c->shm.Reset();
    return Status::OK();
  }
  if (c->leaders.size() == 1) return Status::OK();  // one machine
  c->hierarchical = true;
  if (c->local_rank != 0) return Status::OK();
  const int L = static_cast<int>(c->leaders.size());
  const int me = c->Leaders().rank;
  return ConnectRing(c, c->leaders[(me + 1) % L], c->leaders[Mod(me - 1, L)],
                     &c->lnext, &c->lprev, DeadlineIn(c->opt.timeout_seconds));
}

// The NCCL communicator, made at the first device-memory collective: rank
// 0's unique id travels over the authenticated ring; each rank uses its
// planned GPU (DT_LOCAL_GPU, else LOCAL_RANK).
Status Communicator::Impl::Nccl(NcclBackend** out) {
  if (!nccl) {
    if (!NcclBackend::Compiled()) {
      return Status::Unavailable(
          "device memory needs NCCL, and dist-train was built without it");
    }
    char msg[1 + sizeof(NcclId)] = {0};
    NcclId id{};
    if (rank == 0) {
      Status s = NcclBackend::NewId(&id);
      if (!s.ok()) Log(s.message());
      msg[0] = s.ok();
      std::memcpy(msg + 1, id.data(), id.size());
    }
    DT_RETURN_IF_ERROR(RingBroadcast(this, msg, sizeof(msg), 0));
    if (!msg[0])
      return Status::Unavailable("rank 0 could not create an NCCL unique id");
    std::memcpy(id.data(), msg + 1, id.size());
    const char* gpu = getenv("DT_LOCAL_GPU");
    if (gpu == nullptr) gpu = getenv("LOCAL_RANK");
    int devices = std::max(1, NcclBackend::DeviceCount());
    int device = (gpu ? std::atoi(gpu) : 0) % devices;
    Status s = NcclBackend::Create(
        rank, size, device, id, opt.timeout_seconds,
        [this] { return PollCtrl(); }, &nccl);
    if (!s.ok()) return Fail(s);  // the others must not wait for us
  }
  *out = nccl.get();
  return Status::OK();
}

Status Communicator::AllReduce(const void* send, void* recv, size_t count,
                               DataType type, ReduceOp op) {
  if (NcclBackend::IsDevicePointer(recv)) {
    return impl_->WithNccl([&](NcclBackend* n) {
      return n->AllReduce(send, recv, count, type, op);
    });
  }
  size_t es = DataTypeSize(type);
  if (send != recv && count > 0) std::memmove(recv, send, count * es);
  char* buf = static_cast<char*>(recv);
  Impl* c = impl_.get();
  if (c->hierarchical) {
    // shared memory to the leader, a ring among leaders, shared memory back
    bool shm = c->shm.mapped();
    if (shm) {
      size_t mine = c->local_rank == 0 ? count : 0;  // the leader's
      DT_RETURN_IF_ERROR(c->ShmReduce(buf, count, type, op, buf, 0, mine));
    }
    if (c->local_rank == 0)
      DT_RETURN_IF_ERROR(RingAllReduce(c, c->Leaders(), buf, count, type, op));
    if (shm) DT_RETURN_IF_ERROR(c->ShmBroadcast(buf, count * es, 0, true));
  } else if (c->OneMachineShm()) {
    DT_RETURN_IF_ERROR(c->ShmReduce(buf, count, type, op, buf, 0, count));
  } else if (c->size > 1) {
    DT_RETURN_IF_ERROR(RingAllReduce(c, c->AllRanks(), buf, count, type, op));
  }
  if (op == ReduceOp::kAvg) DivideBy(recv, count, type, impl_->size);
  return Status::OK();
}

Status Communicator::ReduceScatter(const void* send, void* recv, size_t count,
                                   DataType type, ReduceOp op) {
  if (NcclBackend::IsDevicePointer(recv)) {
    return impl_->WithNccl([&](NcclBackend* n) {
      return n->ReduceScatter(send, recv, count, type, op);
    });
  }
  size_t es = DataTypeSize(type), total = count * impl_->size;
  if (impl_->OneMachineShm()) {
    const size_t lo = count * impl_->rank;
    DT_RETURN_IF_ERROR(impl_->ShmReduce(static_cast<const char*>(send), total,
                                        type, op, static_cast<char*>(recv), lo,
                                        lo + count));
    if (op == ReduceOp::kAvg) DivideBy(recv, count, type, impl_->size);
    return Status::OK();
  }
  std::vector<char> work(static_cast<const char*>(send),
                         static_cast<const char*>(send) + total * es);
  if (impl_->size > 1)
    DT_RETURN_IF_ERROR(RingReduceScatter(impl_.get(), impl_->AllRanks(),
                                         work.data(), total, type, op));
  if (count > 0)
    std::memcpy(recv, work.data() + count * impl_->rank * es, count * es);
  if (op == ReduceOp::kAvg) DivideBy(recv, count, type, impl_->size);
  return Status::OK();
}

Status Communicator::AllGather(const void* send, void* recv, size_t count,
                               DataType type) {
  if (NcclBackend::IsDevicePointer(recv)) {
    return impl_->WithNccl(
        [&](NcclBackend* n) { return n->AllGather(send, recv, count, type); });
  }
  size_t es = DataTypeSize(type);
  char* buf = static_cast<char*>(recv);
  if (count > 0) std::memmove(buf + count * impl_->rank * es, send, count * es);
  if (impl_->size == 1) return Status::OK();
  if (impl_->OneMachineShm()) return impl_->ShmAllGather(buf, count * es);
  return RingAllGather(impl_.get(), impl_->AllRanks(), buf, count * impl_->size,
                       es);
}

Status Communicator::Broadcast(void* buf, size_t count, DataType type,
                               int root) {
  if (root < 0 || root >= impl_->size) {
    return Status::InvalidArgument("broadcast root " + std::to_string(root) +
                                   " is not a rank of " +
                                   std::to_string(impl_->size));
  }
  if (NcclBackend::IsDevicePointer(buf)) {
    return impl_->WithNccl(
        [&](NcclBackend* n) { return n->Broadcast(buf, count, type, root); });
  }
  if (impl_->OneMachineShm()) {
    return impl_->ShmBroadcast(static_cast<char*>(buf),
                               count * DataTypeSize(type), root);
  }
  return RingBroadcast(impl_.get(), static_cast<char*>(buf),
                       count * DataTypeSize(type), root);
}

Status Communicator::Barrier() {
  int32_t one = 1, total = 0;
  DT_RETURN_IF_ERROR(
      AllReduce(&one, &total, 1, DataType::kInt32, ReduceOp::kSum));
  if (total != impl_->size)
    return Status::Internal("barrier counted " + std::to_string(total) +
                            " ranks");
  return Status::OK();
}

}  // namespace dist_train
