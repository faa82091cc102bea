// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Bootstrap: the rendezvous at rank 0 (a star of authenticated control
// connections and the table of data addresses), the data rings, grouping
// the ranks by machine.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/parse.h"
#include "runtime/address_table.h"
#include "runtime/admission.h"
#include "runtime/communicator_impl.h"
#include "runtime/ring_collectives.h"

namespace dist_train {

namespace {

// A rank's wait for rank 0's answers in one attempt (a squatter that holds
// the connection costs this, then the next candidate port is tried).
constexpr double kJoinAttemptSeconds = 3;

Deadline Soon(Deadline deadline, double seconds) {
  return std::min(deadline, DeadlineIn(seconds));
}

// "host:port" as the address table carries it. The table comes from rank 0
// (and the ports in it from each rank's join message), so nothing in it is
// trusted: a bad port is an error, never port 0 or a wrapped number.
bool SplitDataAddress(const std::string& addr, std::string* host, int* port) {
  size_t colon = addr.rfind(':');
  uint64_t n = 0;
  if (colon == std::string::npos || colon == 0 ||
      !ParseUint(std::string_view(addr).substr(colon + 1), 1, 65535, &n))
    return false;
  *host = addr.substr(0, colon);
  *port = static_cast<int>(n);
  return true;
}

std::string Seconds(double seconds) {
  return std::to_string(static_cast<int>(seconds));
}

// Rank 0's listening socket: MASTER_PORT, else the next candidates, on
// the address the job uses.
Status ListenForRanks(CommunicatorImpl* comm, const std::string& bind_addr,
                      int* listen_fd, int* port) {
  Status status;
  for (int k = 0; k < comm->opt.port_candidates; ++k) {
    status = Listen(comm->opt.master_port + k, listen_fd, port, bind_addr);
    if (status.ok()) break;
    comm->Log(status.message() + (k + 1 < comm->opt.port_candidates
                                      ? "; trying the next port"
                                      : ""));
  }
  return status;
}

// Names the ranks that did not join rank 0 in time.
Status MissingRanks(const CommunicatorImpl* comm, int port) {
  std::string missing;
  for (int r = 1; r < comm->size; ++r)
    if (!comm->ctrl[r].valid())
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  return Status::Timeout("rendezvous on port " + std::to_string(port) +
                         ": ranks " + missing + " did not arrive within " +
                         Seconds(comm->opt.timeout_seconds) + " s");
}

// Whether the peer of a connection closed or reset it (a rank that gave up
// waiting for our ACCEPT and is joining again).
bool Gone(const Conn& conn) {
  pollfd p{conn.fd(), POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  char byte;
  ssize_t n = recv(conn.fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// Rank 0's last word on an authenticated join, before it sends ACCEPT: ""
// or why it is refused. A counted rank whose old connection is gone is
// reconnecting; one whose connection is alive is a duplicate.
std::string VetJoin(const CommunicatorImpl* comm, const JoinInfo& j) {
  if (j.rank == 0) return "it claims rank 0, which is this rank";
  if (j.data_port == 0 || j.data_port > 65535)
    return "data port " + std::to_string(j.data_port);
  if (comm->ctrl[j.rank].valid() && !Gone(comm->ctrl[j.rank]))
    return "rank " + std::to_string(j.rank) + " already joined";
  return "";
}

// Records an admitted rank; returns whether it is new (not a reconnect).
bool Record(CommunicatorImpl* comm, Conn conn, const JoinInfo& peer,
            int data_port, bool first) {
  const std::string host = HostOf(conn.peer());
  comm->addr[peer.rank] = host + ":" + std::to_string(peer.data_port);
  if (first) {  // rank 0 as its peers reach it (an address)
    std::string my_addr = comm->opt.local_addr.empty() ? LocalAddress(conn.fd())
                                                       : comm->opt.local_addr;
    if (!my_addr.empty())
      comm->addr[0] = my_addr + ":" + std::to_string(data_port);
  }
  conn.set_peer("rank " + std::to_string(peer.rank) + " (" + host + ")");
  conn.WatchForLoss();
  bool fresh = !comm->ctrl[peer.rank].valid();
  if (!fresh)
    comm->Log("rank " + std::to_string(peer.rank) + " reconnected from " +
              host);
  comm->ctrl[peer.rank] = std::move(conn);
  return fresh;
}

// One thread, event-driven (Admission): strangers cost a connection slot
// for at most the handshake deadline and never delay a real rank.
Status ServeRendezvous(CommunicatorImpl* comm, int data_port,
                       const std::string& bind_addr, Deadline deadline) {
  int listen_fd = -1, port = 0;
  DT_RETURN_IF_ERROR(ListenForRanks(comm, bind_addr, &listen_fd, &port));
  comm->ctrl.resize(comm->size);
  comm->left.assign(comm->size, false);
  comm->addr.assign(comm->size, "");
  comm->addr[0] = comm->opt.master_addr + ":" + std::to_string(data_port);
  int joined = 1;
  {
    Admission admission(
        listen_fd, comm->cred, comm->size,
        [comm](const std::string& m) { comm->Log(m); },
        AdmissionLimits::ForWorld(static_cast<size_t>(comm->size)));
    auto vet = [comm](const JoinInfo& j) { return VetJoin(comm, j); };
    while (joined < comm->size) {
      Conn conn;
      JoinInfo peer;
      if (!admission.Next(deadline, -1, vet, &conn, &peer).ok()) break;
      joined += Record(comm, std::move(conn), peer, data_port, joined == 1);
    }
  }
  close(listen_fd);
  if (joined < comm->size) return MissingRanks(comm, port);
  std::string table;
  DT_RETURN_IF_ERROR(EncodeAddressTable(comm->addr, &table));
  for (int r = 1; r < comm->size; ++r)
    DT_RETURN_IF_ERROR(
        comm->ctrl[r].SendFrame(FrameType::kTable, table, deadline));
  return Status::OK();
}

// One attempt at rank 0 on `port`. `fatal`: the failure is ours (a name
// that does not resolve, a local address we cannot use) and will not get
// better by waiting; every other one might.
Status TryJoin(CommunicatorImpl* comm, const JoinInfo& me, int port,
               Deadline deadline, Conn* out, bool* fatal) {
  const Options& opt = comm->opt;
  Conn conn;
  Status connected =
      ConnectOnce(opt.master_addr, port, 1.0, &conn, opt.local_addr);
  *fatal = connected.code() == Status::Code::kInvalidArgument;
  DT_RETURN_IF_ERROR(connected);
  ClientSide client_side;
  Deadline attempt = Soon(deadline, kJoinAttemptSeconds);
  DT_RETURN_IF_ERROR(SendJoin(&conn, comm->cred, me, attempt, &client_side));
  DT_RETURN_IF_ERROR(ReadAccept(&conn, comm->cred, me, &client_side, attempt));
  conn.set_peer("rank 0 (" + opt.master_addr + ")");
  conn.WatchForLoss();
  *out = std::move(conn);
  return Status::OK();
}

// Connects ctrl[0] to rank 0, trying its candidate ports until one proves
// it holds the job's secret. Whoever else answers there (a squatter, a
// stale server, another job) is not final: the reason is kept for the
// error at the deadline.
Status JoinRankZero(CommunicatorImpl* comm, int data_port, Deadline deadline) {
  const Options& opt = comm->opt;
  JoinInfo me{static_cast<uint32_t>(comm->rank),
              static_cast<uint32_t>(comm->size),
              static_cast<uint32_t>(data_port)};
  auto backoff = std::chrono::milliseconds(2);
  std::string last;  // the most telling answer so far
  while (Clock::now() < deadline) {
    for (int k = 0; k < opt.port_candidates; ++k) {
      Conn conn;
      bool fatal = false;
      Status status =
          TryJoin(comm, me, opt.master_port + k, deadline, &conn, &fatal);
      if (status.ok()) {
        comm->ctrl.resize(1);
        comm->ctrl[0] = std::move(conn);
        return Status::OK();
      }
      if (fatal) return status;
      if (status.code() == Status::Code::kPermissionDenied || last.empty())
        last = status.message();
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(100));
  }
  return Status::Timeout("no rank 0 of job '" + comm->cred.identity + "' at " +
                         opt.master_addr + ":" +
                         std::to_string(opt.master_port) + "+" +
                         std::to_string(opt.port_candidates - 1) + " within " +
                         Seconds(opt.timeout_seconds) + " s" +
                         (last.empty() ? "" : " (last answer: " + last + ")"));
}

// Our half towards the next rank: its address came from rank 0 and its
// port is its own, but it drops us if we are slow, so every failure before
// the deadline means "again".
Status JoinNext(CommunicatorImpl* comm, int next_rank, Conn* next,
                Deadline deadline) {
  const std::string& next_addr = comm->addr[next_rank];
  std::string host;
  int port = 0;
  if (!SplitDataAddress(next_addr, &host, &port)) {
    return Status::Internal("rank " + std::to_string(next_rank) +
                            "'s data address '" + next_addr +
                            "' has no port from 1 to 65535");
  }
  JoinInfo me{static_cast<uint32_t>(comm->rank),
              static_cast<uint32_t>(comm->size), 0};
  Status status;
  while (Clock::now() < deadline) {
    Conn conn;
    ClientSide client_side;
    status = ConnectOnce(host, port, 1.0, &conn, comm->opt.local_addr);
    if (status.ok())
      status = SendJoin(&conn, comm->cred, me, deadline, &client_side);
    if (status.ok())
      status = ReadAccept(&conn, comm->cred, me, &client_side, deadline);
    if (status.ok()) {
      conn.set_peer("rank " + std::to_string(next_rank) + " (" + host + ")");
      *next = std::move(conn);
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Status::Timeout("cannot reach rank " + std::to_string(next_rank) +
                         " at " + next_addr + ": " + status.message());
}

}  // namespace

Status JobAddress(const Options& opt, int rank, std::string* addr) {
  addr->clear();
  if (!opt.local_addr.empty()) return *addr = opt.local_addr, Status::OK();
  std::string master;
  DT_RETURN_IF_ERROR(Resolve(opt.master_addr, &master));
  if (rank == 0) {
    // Where the others reach us; a MASTER_ADDR that is not ours (a NAT
    // address, a proxy) leaves every address open, as before. So does a
    // name that only we resolve to loopback (Debian's 127.0.1.1 for the
    // host's own name): the others reach us elsewhere.
    bool loopback = master.rfind("127.", 0) == 0;
    bool named_loopback =
        loopback && opt.master_addr != master && opt.master_addr != "localhost";
    if (IsLocalAddress(master) && !named_loopback) *addr = master;
    return Status::OK();
  }
  // No route yet: every address, and connecting will tell what is wrong.
  RouteSource(master, addr).IgnoreError();
  return Status::OK();
}

std::string HostOf(const std::string& peer) {
  return peer.substr(0, peer.rfind(':'));
}

Status Rendezvous(CommunicatorImpl* comm, int data_port,
                  const std::string& bind_addr, Deadline deadline) {
  if (comm->rank == 0)
    return ServeRendezvous(comm, data_port, bind_addr, deadline);
  DT_RETURN_IF_ERROR(JoinRankZero(comm, data_port, deadline));
  FrameType type;
  std::string table;
  DT_RETURN_IF_ERROR(comm->ctrl[0].RecvFrame(&type, &table, deadline, 1 << 24));
  if (type == FrameType::kAbort) return Status::Unavailable(table);
  if (type != FrameType::kTable)
    return Status::Internal("rank 0 sent frame type " +
                            std::to_string(static_cast<int>(type)) +
                            " where the address table belongs");
  return DecodeAddressTable(table, static_cast<size_t>(comm->size),
                            &comm->addr);
}

// Joining the next rank runs beside admitting the previous one (each rank
// waits for its next one's greeting while greeting its previous one), so a
// ring of ranks cannot wait in a cycle.
Status ConnectRing(CommunicatorImpl* comm, int next_rank, int prev_rank,
                   Conn* next, Conn* prev, Deadline deadline) {
  Status joined;
  std::thread joiner(
      [&] { joined = JoinNext(comm, next_rank, next, deadline); });
  Status admitted;
  JoinInfo peer;
  {
    Admission admission(comm->data_fd, comm->cred, comm->size,
                        [comm](const std::string& m) { comm->Log(m); });
    admitted = admission.Next(
        deadline, prev_rank, [](const JoinInfo&) { return std::string(); },
        prev, &peer);
  }
  joiner.join();
  if (!admitted.ok())
    return Status::Timeout("rank " + std::to_string(prev_rank) +
                           " did not connect to this rank's data port within " +
                           Seconds(comm->opt.timeout_seconds) + " s");
  prev->set_peer("rank " + std::to_string(prev_rank) + " (" +
                 HostOf(prev->peer()) + ")");
  return joined;
}

// Ranks share a machine when the host parts of their data addresses match;
// a machine's lowest rank is its leader.
void GroupByHost(CommunicatorImpl* comm) {
  const std::string my_host = HostOf(comm->addr[comm->rank]);
  std::vector<std::string> seen;
  for (int r = 0; r < comm->size; ++r) {
    std::string host = HostOf(comm->addr[r]);
    if (host == my_host) comm->local_ranks.push_back(r);
    if (std::find(seen.begin(), seen.end(), host) == seen.end()) {
      seen.push_back(host);
      comm->leaders.push_back(r);
    }
  }
  comm->local_rank =
      static_cast<int>(std::find(comm->local_ranks.begin(),
                                 comm->local_ranks.end(), comm->rank) -
                       comm->local_ranks.begin());
}

Status ConnectLeaderRing(CommunicatorImpl* comm) {
  const int num_leaders = static_cast<int>(comm->leaders.size());
  const int leader_index = comm->LeaderIndex();
  DT_RETURN_IF_ERROR(ConnectRing(
      comm, comm->leaders[(leader_index + 1) % num_leaders],
      comm->leaders[Mod(leader_index - 1, num_leaders)], &comm->leader_next,
      &comm->leader_prev, DeadlineIn(comm->opt.timeout_seconds)));
  comm->leader_ring = std::make_unique<TcpRingLink>(
      comm, &comm->leader_next, &comm->leader_prev, num_leaders, leader_index,
      &comm->scratch);
  return Status::OK();
}

}  // namespace dist_train
