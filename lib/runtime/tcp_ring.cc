// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The TCP ring: TcpRingLink's byte exchange with both neighbours at once
// (and its way of reporting a broken connection), on which the ring
// algorithms (ring_collectives.h) run for all ranks or for the machines'
// leaders, and the NCCL communicator, whose unique id rank 0 broadcasts
// over the ring.

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "base/env.h"
#include "runtime/communicator_impl.h"
#include "runtime/ring_collectives.h"

namespace dist_train {

namespace {

constexpr size_t kMaxSend = 1 << 22;  // bytes per send() call

// Transfers of at most kSpinBytes each way retry the sockets for up to
// kSocketSpinTime before sleeping in poll(), where waking costs more than a
// small message takes to cross: 2 local-cluster nodes x 1 rank, 4 B-1 KiB
// all-reduce 13-18 us spinning, 25-30 us sleeping, Open MPI (which spins)
// 15-21 us. Only where SocketSpinPays: a spinner that shares its only CPU
// with the rank it waits for keeps that rank off it (both nodes' ranks
// bound to one core of this VM: 110-120 us instead of 25), and a machine
// without a CPU beyond its ranks' has none for the ranks waiting in shared
// memory and the network stack (2 nodes x 2 ranks on this VM's 2 CPUs,
// 32-256 KiB: 1.2-2x slower spinning).
constexpr size_t kSpinBytes = 64 << 10;
constexpr auto kSocketSpinTime = std::chrono::microseconds(50);

// One transfer's progress in both directions.
struct Transfer {
  Conn& to;
  Conn& from;
  const char* sbuf;
  size_t slen;
  char* rbuf;
  size_t rlen;
  size_t sent = 0, got = 0;
  bool sending() const { return sent < slen; }
  bool receiving() const { return got < rlen; }
};

// Moves whatever the sockets take or hold now, without waiting; sets
// `progress` when anything moved.
Status TryBothWays(CommunicatorImpl* comm, Transfer* xfer,
                   const std::function<void(size_t)>& on_recv, bool* progress) {
  *progress = false;
  if (xfer->sending()) {
    ssize_t k = send(xfer->to.fd(), xfer->sbuf + xfer->sent,
                     std::min<size_t>(xfer->slen - xfer->sent, kMaxSend),
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      xfer->sent += static_cast<size_t>(k), *progress = true;
    } else if (k < 0 && errno != EAGAIN && errno != EINTR) {
      return comm->DataError(Status::Unavailable(
          xfer->to.peer() + " is gone (" + strerror(errno) + ")"));
    }
  }
  if (xfer->receiving()) {
    ssize_t k = recv(xfer->from.fd(), xfer->rbuf + xfer->got,
                     xfer->rlen - xfer->got, MSG_DONTWAIT);
    if (k > 0) {
      xfer->got += static_cast<size_t>(k), *progress = true;
      if (on_recv) on_recv(xfer->got);
    } else if (k == 0) {
      return comm->DataError(Status::Unavailable(
          xfer->from.peer() + " closed the connection (died?)"));
    } else if (errno != EAGAIN && errno != EINTR) {
      return comm->DataError(Status::Unavailable(
          xfer->from.peer() + " is gone (" + strerror(errno) + ")"));
    }
  }
  return Status::OK();
}

// Sleeps until either neighbour's socket is ready or a control connection
// has news (handled here: a failure notice ends the transfer).
Status WaitForSockets(CommunicatorImpl* comm, const Transfer& xfer,
                      Deadline deadline) {
  std::vector<pollfd> fds = {
      {xfer.to.fd(), static_cast<short>(xfer.sending() ? POLLOUT : 0), 0},
      {xfer.from.fd(), static_cast<short>(xfer.receiving() ? POLLIN : 0), 0}};
  comm->WatchCtrl(&fds);
  auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     deadline - Clock::now())
                     .count();
  int ready = poll(fds.data(), fds.size(),
                   static_cast<int>(std::max<int64_t>(left_ms, 0)));
  if (ready < 0 && errno == EINTR) return Status::OK();
  if (ready <= 0) {
    return comm->Fail(Status::Timeout(
        "rank " + std::to_string(comm->rank) + ": no progress for " +
        std::to_string(static_cast<int>(comm->opt.timeout_seconds)) +
        " s waiting on " +
        (xfer.receiving() ? xfer.from.peer() : xfer.to.peer())));
  }
  if (fds[0].revents || fds[1].revents) return Status::OK();  // data first
  return comm->HandleCtrl(fds, 2);
}

}  // namespace

bool SocketSpinPays(int local_ranks) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return false;
  return CPU_COUNT(&allowed) > 1 && local_ranks < sysconf(_SC_NPROCESSORS_ONLN);
}

// A data connection broke. A neighbour's failure often shows up here first
// as a consequence (its process exited after the real failure): give the
// control connections a moment to deliver the root cause.
Status CommunicatorImpl::DataError(const Status& status) {
  Deadline grace = DeadlineIn(0.25);
  while (failure.empty() && Clock::now() < grace) {
    std::vector<pollfd> fds;
    WatchCtrl(&fds);
    if (poll(fds.data(), fds.size(), 20) <= 0) continue;
    // Stops at the first failure, which Fail recorded in `failure`.
    HandleCtrl(fds, 0).IgnoreError();
  }
  return Fail(status);
}

int CommunicatorImpl::LeaderIndex() const {
  auto it = std::find(leaders.begin(), leaders.end(), rank);
  return it == leaders.end() ? -1 : static_cast<int>(it - leaders.begin());
}

Status TcpRingLink::Exchange(const char* sbuf, size_t slen, char* rbuf,
                             size_t rlen,
                             const std::function<void(size_t)>& on_recv) {
  CommunicatorImpl* comm = comm_;
  if (!comm->failure.empty()) return Status::Unavailable(comm->failure);
  Transfer xfer{*next_, *prev_, sbuf, slen, rbuf, rlen};
  Deadline deadline = DeadlineIn(comm->opt.timeout_seconds);
  const bool spin =
      comm->socket_spin && slen <= kSpinBytes && rlen <= kSpinBytes;
  std::optional<Clock::time_point> spin_end;
  while (xfer.sending() || xfer.receiving()) {
    // Try both directions first; poll only when neither can move, so bulk
    // transfers cost one syscall per chunk, not two.
    bool progress = false;
    DT_RETURN_IF_ERROR(TryBothWays(comm, &xfer, on_recv, &progress));
    if (progress) continue;  // finish what buffered data allows first
    if (spin) {
      Clock::time_point now = Clock::now();
      if (!spin_end) spin_end = now + kSocketSpinTime;
      if (now < *spin_end) continue;
    }
    DT_RETURN_IF_ERROR(WaitForSockets(comm, xfer, deadline));
  }
  return Status::OK();
}

namespace {

// DT_LOCAL_GPU, else LOCAL_RANK, else 0. A bad value is an error: guessing
// a device would put two ranks on one GPU.
Status PlannedGpu(int* gpu) {
  EnvMap env = ProcessEnv();
  std::optional<uint64_t> n;
  if (const char* name = EnvFirstSet(env, {"DT_LOCAL_GPU", "LOCAL_RANK"}))
    DT_RETURN_IF_ERROR(EnvUint(env, name, 0, 1 << 24, &n));
  *gpu = static_cast<int>(n.value_or(0));
  return Status::OK();
}

}  // namespace

// The NCCL communicator, made at the first device-memory collective: rank
// 0's unique id travels over the authenticated ring; each rank uses its
// planned GPU (DT_LOCAL_GPU, else LOCAL_RANK).
Status CommunicatorImpl::Nccl(Transport** out) {
  if (!nccl) {
    if (!NcclBackend::Compiled()) {
      return Status::Unavailable(
          "device memory needs NCCL, and dist-train was built without it");
    }
    int gpu = 0;
    Status planned = PlannedGpu(&gpu);
    if (!planned.ok()) {
      Fail(planned).IgnoreError();  // the others must not wait for us
      return planned;
    }
    char msg[1 + sizeof(NcclId)] = {0};  // ok byte, then the id
    NcclId id{};
    if (rank == 0) {
      Status status = NcclBackend::NewId(&id);
      if (!status.ok()) Log(status.message());
      msg[0] = status.ok();
      std::memcpy(msg + 1, id.data(), id.size());
    }
    DT_RETURN_IF_ERROR(RingBroadcast(AllRanks(), msg, sizeof(msg), 0));
    if (!msg[0])
      return Status::Unavailable("rank 0 could not create an NCCL unique id");
    std::memcpy(id.data(), msg + 1, id.size());
    int devices = std::max(1, NcclBackend::DeviceCount());
    int device = gpu % devices;
    Status status = NcclBackend::Create(
        rank, size, device, id, opt.timeout_seconds,
        [this] { return PollCtrl(); }, &nccl);
    if (!status.ok()) return Fail(status);  // the others must not wait for us
  }
  *out = nccl.get();
  return Status::OK();
}

}  // namespace dist_train
