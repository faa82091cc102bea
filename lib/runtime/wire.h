// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Sockets with deadlines for the runtime: every blocking call takes a
// deadline, and peers are named in errors ("rank 3 (node2:41234)").
// Control messages are frames: u32 length (big endian, type + payload),
// u8 type, payload; frames larger than the limit are refused.

#ifndef DIST_TRAIN_LIB_RUNTIME_WIRE_H_
#define DIST_TRAIN_LIB_RUNTIME_WIRE_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/coding.h"
#include "dist_train/status.h"

namespace dist_train {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// Longer waits are cut to this (a year): a steady_clock time point
// overflows past about 292 years from boot, into the past.
constexpr double kMaxWaitSeconds = 365.0 * 24 * 3600;

Deadline DeadlineIn(double seconds);

constexpr size_t kMaxFrame = 64 * 1024;

enum class FrameType : uint8_t {
  kHello = 1,   // server -> client: magic, version, nonce
  kJoin = 2,    // client -> server: identity, rank, world, nonce, port, MAC
  kAccept = 3,  // server -> client: MAC
  kReject = 4,  // server -> client: reason
  kTable = 5,   // rank 0 -> all: every rank's data address
  kAbort = 6,   // any -> rank 0 -> all: a rank failed
  kBye = 7,     // a rank shuts down cleanly: its disconnect is no failure
  kAgree = 8,   // rank <-> rank 0 at set-up: a value every rank must share
};

// An owned, connected TCP socket. Movable, not copyable.
class Conn {
 public:
  Conn() = default;
  explicit Conn(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}
  ~Conn();
  Conn(Conn&& o) noexcept;
  Conn& operator=(Conn&& o) noexcept;
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  const std::string& peer() const { return peer_; }
  void set_peer(std::string p) { peer_ = std::move(p); }
  void Close();
  // TCP keepalive probes (after kLossIdleSeconds idle, every
  // kLossProbeSeconds, kLossProbes of them) and a TCP_USER_TIMEOUT of
  // kLossSeconds: a peer whose machine or network is gone (no FIN, no
  // RST, no ACK) fails this connection within kLossSeconds even while we
  // only wait on it. A live machine's kernel answers the probes even when
  // the process is stopped or hung.
  void WatchForLoss();
  // Whether a call failed because the peer's machine stopped answering
  // (ETIMEDOUT, EHOSTUNREACH, ENETUNREACH), not because it closed.
  bool lost() const { return lost_; }

  Status SendAll(const void* data, size_t len, Deadline deadline);
  Status RecvAll(void* data, size_t len, Deadline deadline);
  Status SendFrame(FrameType type, const std::string& payload,
                   Deadline deadline);
  // Refuses frames over `max_len` bytes without reading them.
  Status RecvFrame(FrameType* type, std::string* payload, Deadline deadline,
                   size_t max_len = kMaxFrame);

 private:
  // The error of a failed send or recv, with `lost_` set for the errors
  // that mean the peer's machine or network is gone.
  Status Gone(const char* call, int err);

  int fd_ = -1;
  std::string peer_;
  bool lost_ = false;
};

constexpr int kLossIdleSeconds = 4;
constexpr int kLossProbeSeconds = 2;
constexpr int kLossProbes = 3;
constexpr int kLossSeconds = kLossIdleSeconds + kLossProbeSeconds * kLossProbes;

// A listening socket on `port` (0 = any) of `addr` ("" = all addresses).
Status Listen(int port, int* fd, int* bound_port, const std::string& addr = "");

// The first IPv4 address of `host` ("10.0.0.3").
Status Resolve(const std::string& host, std::string* ip);
// The local address this machine's packets to `ip` leave from (no packet
// is sent), e.g. "127.0.0.1" for a loopback address.
Status RouteSource(const std::string& ip, std::string* addr);
// Whether `ip` is an address of this machine (one we can bind).
bool IsLocalAddress(const std::string& ip);

// Accepts one connection before the deadline.
Status Accept(int listen_fd, Deadline deadline, Conn* out);

// One connection attempt to host:port that gives up after `attempt_timeout`
// seconds (refused: kUnavailable), from `local_addr` when given.
Status ConnectOnce(const std::string& host, int port, double attempt_timeout,
                   Conn* out, const std::string& local_addr = "");

// The local address of a connected socket ("10.0.0.3"), as peers see it.
std::string LocalAddress(int fd);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_WIRE_H_
