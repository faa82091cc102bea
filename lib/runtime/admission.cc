// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/admission.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace dist_train {
namespace {

constexpr size_t kHead = 5;  // u32 length, u8 type

int MillisUntil(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - Clock::now())
                  .count();
  return static_cast<int>(std::clamp<int64_t>(left + 1, 0, 1 << 30));
}

uint32_t FrameLength(const std::string& head) {
  const auto* b = reinterpret_cast<const unsigned char*>(head.data());
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) |
         (uint32_t{b[2]} << 8) | b[3];
}

// "10.0.0.3:4711" -> "10.0.0.3".
std::string SourceOf(const std::string& peer) {
  return peer.substr(0, peer.rfind(':'));
}

}  // namespace

Admission::Admission(int listen_fd, Credentials cred, uint32_t world, LogFn log,
                     AdmissionLimits limits)
    : listen_fd_(listen_fd),
      cred_(std::move(cred)),
      world_(world),
      log_(std::move(log)),
      limits_(limits),
      refusals_(limits.logged_refusals) {}

Admission::~Admission() {
  std::string summary = refusals_.Summary();
  if (!summary.empty()) log_(summary);
}

void Admission::Refused(const std::string& line) {
  if (refusals_.Admit()) log_(line);
}

// Oldest first: whoever has waited longest without proving anything.
void Admission::MakeRoomFor(const std::string& source) {
  size_t same = 0;
  for (const Pending& p : pending_) same += p.source == source;
  auto victim = pending_.end();
  if (same >= limits_.per_source) {
    victim = std::find_if(pending_.begin(), pending_.end(),
                          [&](const Pending& p) { return p.source == source; });
  } else if (pending_.size() >= limits_.total) {
    victim = pending_.begin();
  }
  if (victim == pending_.end()) return;
  Refused("dropped " + victim->conn.peer() +
          ": too many connections that have not joined");
  pending_.erase(victim);
}

// Takes every connection waiting in the backlog and greets it at once.
void Admission::AcceptWaiting() {
  for (int k = 0; k < 1024; ++k) {
    Conn conn;
    if (!Accept(listen_fd_, Clock::now(), &conn).ok()) return;
    Pending p;
    p.source = SourceOf(conn.peer());
    p.deadline = DeadlineIn(limits_.handshake_seconds);
    // A greeting that cannot be sent (a reset) is nobody we wait for.
    if (!SendHello(&conn, cred_, DeadlineIn(0.05), &p.side).ok()) continue;
    MakeRoomFor(p.source);
    p.conn = std::move(conn);
    pending_.push_back(std::move(p));
  }
}

void Admission::DropExpired() {
  const Deadline now = Clock::now();
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->deadline > now) {
      ++it;
      continue;
    }
    Refused("dropped " + it->conn.peer() + ": no JOIN within " +
            std::to_string(static_cast<int>(limits_.handshake_seconds * 1000)) +
            " ms");
    it = pending_.erase(it);
  }
}

// Reads what the peer sent so far; a whole JOIN frame goes to Verify.
Admission::Step Admission::Read(Pending* p, int want_rank, const VetFn& vet,
                                JoinInfo* peer) {
  char buf[kMaxJoin + kHead];
  for (;;) {
    size_t want = kHead;
    if (p->in.size() >= kHead) want = kHead + FrameLength(p->in) - 1;
    if (p->in.size() == want) return Verify(p, want_rank, vet, peer);
    ssize_t n = recv(p->conn.fd(), buf, want - p->in.size(), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
      return Step::kWait;
    if (n <= 0) return Step::kDrop;  // closed or reset: nothing to answer
    p->in.append(buf, static_cast<size_t>(n));
    if (p->in.size() == kHead) {
      uint32_t len = FrameLength(p->in);
      if (len == 0 || len - 1 > kMaxJoin) {
        Refused("refused " + p->conn.peer() + ": a frame of " +
                std::to_string(len) + " bytes (limit " +
                std::to_string(kMaxJoin) + ")");
        return Step::kDrop;
      }
    }
  }
}

Admission::Step Admission::Verify(Pending* p, int want_rank, const VetFn& vet,
                                  JoinInfo* peer) {
  FrameType type = static_cast<FrameType>(p->in[kHead - 1]);
  Status verdict = VerifyJoin(cred_, type, p->in.substr(kHead), world_,
                              want_rank, &p->side, peer);
  std::string reason = verdict.ok() ? vet(*peer) : verdict.message();
  if (!reason.empty()) {
    Refused(Refuse(&p->conn, DeadlineIn(0.05), reason).message());
    return Step::kDrop;
  }
  Status sent = SendAccept(&p->conn, cred_, p->side, peer->rank,
                           DeadlineIn(limits_.handshake_seconds));
  return sent.ok() ? Step::kJoined : Step::kDrop;
}

// Data that arrived is read before anything is expired: a rank 0 that was
// not scheduled for a while must not drop JOINs waiting in its buffers.
Status Admission::Next(Deadline deadline, int want_rank, const VetFn& vet,
                       Conn* out, JoinInfo* peer) {
  for (;;) {
    std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}};
    Deadline wake = deadline;
    for (const Pending& p : pending_) {
      fds.push_back({p.conn.fd(), POLLIN, 0});
      wake = std::min(wake, p.deadline);
    }
    int ready = poll(fds.data(), fds.size(), MillisUntil(wake));
    if (ready < 0 && errno != EINTR)
      return Status::IOError(std::string("poll: ") + strerror(errno));
    size_t i = 1;
    for (auto it = pending_.begin(); ready > 0 && it != pending_.end(); ++i) {
      Step step =
          fds[i].revents ? Read(&*it, want_rank, vet, peer) : Step::kWait;
      if (step == Step::kJoined) {
        *out = std::move(it->conn);
        pending_.erase(it);
        return Status::OK();
      }
      it = step == Step::kDrop ? pending_.erase(it) : std::next(it);
    }
    DropExpired();
    if (ready > 0 && fds[0].revents) AcceptWaiting();
    if (Clock::now() >= deadline)
      return Status::Timeout("no peer joined in time");
  }
}

}  // namespace dist_train
