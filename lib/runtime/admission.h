// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The server side of the handshake for every peer that connects to one
// listening socket (rank 0's MASTER_PORT, a rank's data port), event-driven:
// one thread polls the listening socket and every connection that has not
// yet proved itself, so a stranger costs a few hundred bytes and one fd,
// never a wait. A connection that has not sent a complete, valid JOIN
// within `handshake_seconds` of being accepted is dropped; so is the oldest
// unauthenticated one from an address that holds `per_source` already (or
// the oldest of all past `total`). Resets, garbage and refusals are dropped
// (refusals logged, escaped, the first `logged_refusals` only) and never
// end the wait for the real peers.

#ifndef DIST_TRAIN_LIB_RUNTIME_ADMISSION_H_
#define DIST_TRAIN_LIB_RUNTIME_ADMISSION_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <list>
#include <string>

#include "dist_train/status.h"
#include "runtime/handshake.h"
#include "runtime/peer_text.h"
#include "runtime/wire.h"

namespace dist_train {

struct AdmissionLimits {
  // From accept to a complete JOIN; real ranks answer HELLO at once.
  double handshake_seconds = 0.5;
  // Unauthenticated connections held per source address and in all.
  // Generous enough for a job's ranks connecting at once (ForWorld), small
  // enough for the default 1024 fds.
  size_t per_source = 64;
  size_t total = 512;
  // Refusal lines written before they are only counted.
  int logged_refusals = 10;

  // Rank 0's limits for `world` ranks: every rank of a one-machine job may
  // be waiting at once from one address (127.0.0.1), so never fewer than
  // the world. With 64, 1,024 ranks starting on 2 CPUs had their own
  // connections dropped as the oldest (5,329 times in one start) and
  // joined again.
  static AdmissionLimits ForWorld(size_t world) {
    AdmissionLimits l;
    l.per_source = std::max(l.per_source, world);
    l.total = std::max(l.total, world + 64);
    return l;
  }
};

class Admission {
 public:
  using LogFn = std::function<void(const std::string&)>;
  // "" admits the authenticated peer, anything else is the reason to refuse
  // it (sent in a REJECT, logged). Runs before ACCEPT is sent.
  using VetFn = std::function<std::string(const JoinInfo&)>;

  // `listen_fd` (non-blocking) stays the caller's.
  Admission(int listen_fd, Credentials cred, uint32_t world, LogFn log,
            AdmissionLimits limits = AdmissionLimits());
  // Logs how many refusals were left out, if any.
  ~Admission();
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // The next peer whose JOIN checked out (want_rank >= 0: only that rank)
  // and passed `vet`; it has been sent ACCEPT. kTimeout at the deadline.
  Status Next(Deadline deadline, int want_rank, const VetFn& vet, Conn* out,
              JoinInfo* peer);

 private:
  struct Pending {
    Conn conn;
    ServerSide side;
    Deadline deadline;
    std::string source;  // peer address without the port
    std::string in;      // bytes of the JOIN frame so far
  };
  enum class Step { kWait, kDrop, kJoined };

  void AcceptWaiting();
  void MakeRoomFor(const std::string& source);
  void DropExpired();
  Step Read(Pending* p, int want_rank, const VetFn& vet, JoinInfo* peer);
  Step Verify(Pending* p, int want_rank, const VetFn& vet, JoinInfo* peer);
  void Refused(const std::string& line);

  int listen_fd_;
  Credentials cred_;
  uint32_t world_;
  LogFn log_;
  AdmissionLimits limits_;
  std::list<Pending> pending_;  // oldest first
  RefusalLog refusals_;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_ADMISSION_H_
