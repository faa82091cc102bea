// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// How every runtime connection starts (control and data alike):
//   server -> HELLO  magic "DTRV", version, 32-byte nonce, has-secret flag
//   client -> JOIN   magic, version, job identity, rank, world size, data
//                    port, its nonce, HMAC-SHA256(secret, both nonces + all
//                    of the above)
//   server -> ACCEPT HMAC-SHA256(secret, ...) proving it holds the secret
//          or REJECT with the reason, then closes.
// A peer without the secret, from another job or step, or speaking another
// protocol is refused with a log line and never sees data; text it sent
// (a job identity, a reason) is escaped before it reaches a log line. The
// halves are separate so a ring can run them without waiting in a cycle.

#ifndef DIST_TRAIN_LIB_RUNTIME_HANDSHAKE_H_
#define DIST_TRAIN_LIB_RUNTIME_HANDSHAKE_H_

#include <cstdint>
#include <string>

#include "dist_train/status.h"
#include "runtime/wire.h"

namespace dist_train {

struct Credentials {
  std::string identity;  // job identity both sides must share
  std::string token;     // per-job secret, "" = none
};

struct JoinInfo {
  uint32_t rank = 0;
  uint32_t world = 0;
  uint32_t data_port = 0;
};

struct ServerSide {
  std::string nonce;
  std::string client_nonce;  // from the JOIN, once verified
};

// A JOIN frame's payload is never longer.
constexpr size_t kMaxJoin = 4096;

struct ClientSide {
  std::string server_nonce, nonce;
  bool foreign = false;  // the server is not one of ours: try elsewhere
};

// Server half 1: send HELLO.
Status SendHello(Conn* c, const Credentials& cred, Deadline d, ServerSide* s);
// Client half 1: read HELLO, send JOIN.
Status SendJoin(Conn* c, const Credentials& cred, const JoinInfo& me,
                Deadline d, ClientSide* s);
// Server half 2: read JOIN, check it, send ACCEPT or REJECT. `want_rank`
// >= 0 accepts only that rank. On refusal the status says why.
Status CheckJoin(Conn* c, const Credentials& cred, const ServerSide& s,
                 uint32_t world, int want_rank, Deadline d, JoinInfo* peer);
// Server half 2 in parts, for an event loop that reads frames itself:
// checks a received frame (PermissionDenied with the reason, escaped, when
// it is refused; nothing is sent) ...
Status VerifyJoin(const Credentials& cred, FrameType type,
                  const std::string& payload, uint32_t world, int want_rank,
                  ServerSide* s, JoinInfo* peer);
// ... then answers it.
Status SendAccept(Conn* c, const Credentials& cred, const ServerSide& s,
                  uint32_t rank, Deadline d);
// Best effort; returns PermissionDenied("refused <peer>: <reason>").
Status Refuse(Conn* c, Deadline d, const std::string& reason);
// Client half 2: read ACCEPT (checking the server's proof) or REJECT. The
// server is not authenticated until its proof checks out, so no answer is
// final: callers keep looking (another attempt, the next port) until their
// deadline and report the last reason then.
Status ReadAccept(Conn* c, const Credentials& cred, const JoinInfo& me,
                  ClientSide* s, Deadline d);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_HANDSHAKE_H_
