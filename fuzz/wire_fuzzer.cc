// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The runtime's frame reader, both halves of the handshake and the address
// table's decoder, fed what a hostile peer sends (lib/runtime/wire.h,
// handshake.h, address_table.h). The input's first
// byte picks the reader and whether this side holds the job's secret; the
// rest is the peer's byte stream, through a real socket (a socketpair)
// closed after it, so every read ends at once. Properties: nothing is
// accepted without the secret, an accepted rank is inside the world, and
// no byte of the peer's reaches a status message (and so a log line) raw.

#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "runtime/address_table.h"
#include "runtime/handshake.h"
#include "runtime/wire.h"

namespace dist_train {
namespace {

const Credentials kWithSecret{"job-1000.0", std::string(64, 'e')};
const Credentials kNoSecret{"job-1000.0", ""};

// A connection whose peer has sent `bytes` (as much as the socket buffer
// holds) and then shut down its sending side; the peer's end stays open
// (and unread) for our replies until the input is done.
class Peer {
 public:
  explicit Peer(std::string_view bytes) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
                   fds) != 0) {
      return;
    }
    ssize_t n = bytes.empty() ? 0 : write(fds[1], bytes.data(), bytes.size());
    (void)n;  // what does not fit is simply not sent
    shutdown(fds[1], SHUT_WR);
    conn_ = Conn(fds[0], "peer");
    peer_fd_ = fds[1];
  }
  ~Peer() {
    if (peer_fd_ >= 0) close(peer_fd_);
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  Conn* conn() { return conn_.valid() ? &conn_ : nullptr; }

 private:
  Conn conn_;
  int peer_fd_ = -1;
};

// What a peer sends reaches our log lines through these messages: no
// byte of it may forge a line or drive the terminal (lib/runtime/
// peer_text.h).
void CheckPrintable(const Status& s) {
  for (char ch : s.message()) {
    FuzzCheck(ch >= 0x20 && ch < 0x7f, "a peer's bytes reach the log raw",
              s.message());
  }
}

void Frames(Conn* c, size_t max_len) {
  FrameType type;
  std::string payload;
  while (c->RecvFrame(&type, &payload, DeadlineIn(1), max_len).ok()) {
    FuzzCheck(payload.size() <= max_len,
              "RecvFrame returned a frame over the limit");
  }
}

void Server(Conn* c, const Credentials& cred, int want_rank) {
  ServerSide s;
  if (!SendHello(c, cred, DeadlineIn(1), &s).ok()) return;
  JoinInfo peer;
  Status st = CheckJoin(c, cred, s, 4, want_rank, DeadlineIn(1), &peer);
  CheckPrintable(st);
  if (st.ok()) {
    FuzzCheck(cred.token.empty(), "a JOIN without the secret was accepted");
    FuzzCheck(peer.world == 4 && peer.rank < 4,
              "accepted a rank outside the world",
              std::to_string(peer.rank) + "/" + std::to_string(peer.world));
  }
}

void Client(Conn* c, const Credentials& cred) {
  ClientSide s;
  JoinInfo me{2, 4, 41234};
  Status st = SendJoin(c, cred, me, DeadlineIn(1), &s);
  CheckPrintable(st);
  if (!st.ok()) return;
  st = ReadAccept(c, cred, me, &s, DeadlineIn(1));
  CheckPrintable(st);
  if (st.ok()) {
    FuzzCheck(cred.token.empty(),
              "an ACCEPT without the secret's proof was taken");
  }
}

// The address table rank 0 sends (authenticated, but not trusted): every
// address it yields is host:port with a printable host.
void Table(std::string_view bytes) {
  std::vector<std::string> addrs;
  Status st = DecodeAddressTable(std::string(bytes), 4, &addrs);
  CheckPrintable(st);
  if (!st.ok()) return;
  FuzzCheck(addrs.size() == 4, "a table of the wrong length was taken");
  for (const std::string& a : addrs) {
    std::string round;
    FuzzCheck(EncodeAddressTable({a}, &round).ok(),
              "a decoded address is not host:port", a);
    CheckPrintable(Status::Internal(a));
  }
}

}  // namespace

// The first byte: bit 4 = this side has no secret, the rest % 6 = the reader.
int FuzzWire(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const int reader = (mode & 0x0f) % 6;
  if (reader == 5) {
    Table(FuzzText(data + 1, size - 1));
    return 0;
  }
  Peer peer(FuzzText(data + 1, size - 1));
  Conn* c = peer.conn();
  if (c == nullptr) return 0;
  const Credentials& cred = (mode & 0x10) ? kNoSecret : kWithSecret;
  if (reader == 0) Frames(c, kMaxFrame);
  if (reader == 1) Frames(c, mode >> 5);  // tiny limits: 0..7 bytes
  if (reader == 2) Server(c, cred, -1);
  if (reader == 3) Server(c, cred, 1);  // only rank 1 may join
  if (reader == 4) Client(c, cred);
  return 0;
}

}  // namespace dist_train

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dist_train::FuzzWire(data, size);
}
