// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/handshake.h"

#include <openssl/crypto.h>

#include "runtime/crypto.h"
#include "runtime/peer_text.h"

namespace dist_train {
namespace {

constexpr char kMagic[] = "DTRV";
constexpr uint32_t kVersion = 2;  // 2: compact address table, kAgree
constexpr size_t kNonce = 32;

// A fresh nonce, or an error: never a predictable one.
Status Nonce(std::string* n) {
  n->assign(kNonce, '\0');
  if (RandomBytes(n->data(), kNonce)) return Status::OK();
  return Status::Internal("OpenSSL gave no random bytes for a nonce");
}

std::string JoinProof(const Credentials& cred, const std::string& sn,
                      const std::string& cn, const JoinInfo& j) {
  std::string d = "dt-join";
  PutString(&d, cred.identity);
  d += sn + cn;
  PutU32(&d, j.rank), PutU32(&d, j.world), PutU32(&d, j.data_port);
  return Mac(cred.token, d);
}

std::string AcceptProof(const Credentials& cred, const std::string& sn,
                        const std::string& cn, uint32_t rank) {
  std::string d = "dt-accept";
  PutString(&d, cred.identity);
  d += cn + sn;
  PutU32(&d, rank);
  return Mac(cred.token, d);
}

// A MAC OpenSSL failed to make ("") matches nothing, not even another "".
bool Same(const std::string& a, const std::string& b) {
  return !a.empty() && a.size() == b.size() &&
         CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Status Refusal(const std::string& reason) {
  return Status::PermissionDenied(reason);
}

}  // namespace

Status Refuse(Conn* c, Deadline d, const std::string& reason) {
  c->SendFrame(FrameType::kReject, reason, d).IgnoreError();  // best effort
  return Status::PermissionDenied("refused " + c->peer() + ": " + reason);
}

Status SendHello(Conn* c, const Credentials& cred, Deadline d, ServerSide* s) {
  DT_RETURN_IF_ERROR(Nonce(&s->nonce));
  std::string p = kMagic;
  PutU32(&p, kVersion);
  p += s->nonce;
  PutU32(&p, cred.token.empty() ? 0 : 1);
  return c->SendFrame(FrameType::kHello, p, d);
}

Status SendJoin(Conn* c, const Credentials& cred, const JoinInfo& me,
                Deadline d, ClientSide* s) {
  FrameType type;
  std::string p;
  Status st = c->RecvFrame(&type, &p, d, 256);
  if (!st.ok() || type != FrameType::kHello || p.size() != 4 + 4 + kNonce + 4 ||
      p.compare(0, 4, kMagic) != 0) {
    s->foreign = true;
    return Status::Unavailable(c->peer() + " is not a dist-train rendezvous" +
                               (st.ok() ? "" : " (" + st.message() + ")"));
  }
  size_t pos = 4;
  uint32_t version = 0, has_secret = 0;
  GetU32(p, &pos, &version);
  s->server_nonce = p.substr(pos, kNonce);
  pos += kNonce;
  GetU32(p, &pos, &has_secret);
  if (version != kVersion) {
    return Status::InvalidArgument(c->peer() + " speaks protocol version " +
                                   std::to_string(version) + ", we speak " +
                                   std::to_string(kVersion));
  }
  if (has_secret && cred.token.empty()) {
    return Status::PermissionDenied(
        c->peer() +
        " requires the job's secret (DT_JOB_TOKEN) and we have none");
  }
  DT_RETURN_IF_ERROR(Nonce(&s->nonce));
  std::string j = kMagic;
  PutU32(&j, kVersion);
  PutString(&j, cred.identity);
  PutU32(&j, me.rank), PutU32(&j, me.world), PutU32(&j, me.data_port);
  j += s->nonce;
  PutString(&j, cred.token.empty()
                    ? ""
                    : JoinProof(cred, s->server_nonce, s->nonce, me));
  return c->SendFrame(FrameType::kJoin, j, d);
}

Status VerifyJoin(const Credentials& cred, FrameType type, const std::string& p,
                  uint32_t world, int want_rank, ServerSide* s,
                  JoinInfo* peer) {
  std::string identity, nonce, mac;
  size_t pos = 4;
  uint32_t version = 0;
  JoinInfo j;
  bool ok = type == FrameType::kJoin && p.compare(0, 4, kMagic) == 0 &&
            GetU32(p, &pos, &version) && GetString(p, &pos, 1024, &identity) &&
            GetU32(p, &pos, &j.rank) && GetU32(p, &pos, &j.world) &&
            GetU32(p, &pos, &j.data_port) && p.size() >= pos + kNonce;
  if (ok) nonce = p.substr(pos, kNonce), pos += kNonce;
  if (!ok || !GetString(p, &pos, 64, &mac) || pos != p.size())
    return Refusal("malformed JOIN (not a dist-train peer)");
  if (version != kVersion)
    return Refusal("protocol version " + std::to_string(version) +
                   ", expected " + std::to_string(kVersion));
  if (identity != cred.identity)
    return Refusal("it belongs to job '" + EscapePeerText(identity) +
                   "', this is '" + cred.identity + "'");
  if (!cred.token.empty() && mac.empty())
    return Refusal("it has no job secret (DT_JOB_TOKEN)");
  if (cred.token.empty() && !mac.empty())
    return Refusal("it has a job secret and this rank has none");
  if (!cred.token.empty() && !Same(mac, JoinProof(cred, s->nonce, nonce, j)))
    return Refusal("wrong job secret");
  if (j.world != world)
    return Refusal("world size " + std::to_string(j.world) + ", expected " +
                   std::to_string(world));
  if (j.rank >= world ||
      (want_rank >= 0 && j.rank != static_cast<uint32_t>(want_rank)))
    return Refusal("unexpected rank " + std::to_string(j.rank));
  s->client_nonce = nonce;
  *peer = j;
  return Status::OK();
}

Status SendAccept(Conn* c, const Credentials& cred, const ServerSide& s,
                  uint32_t rank, Deadline d) {
  std::string proof = cred.token.empty()
                          ? ""
                          : AcceptProof(cred, s.nonce, s.client_nonce, rank);
  std::string reply;
  PutString(&reply, proof);
  return c->SendFrame(FrameType::kAccept, reply, d);
}

Status CheckJoin(Conn* c, const Credentials& cred, const ServerSide& s,
                 uint32_t world, int want_rank, Deadline d, JoinInfo* peer) {
  FrameType type;
  std::string p;
  DT_RETURN_IF_ERROR(c->RecvFrame(&type, &p, d, kMaxJoin));
  ServerSide side = s;
  JoinInfo j;
  Status verdict = VerifyJoin(cred, type, p, world, want_rank, &side, &j);
  if (!verdict.ok()) return Refuse(c, d, verdict.message());
  DT_RETURN_IF_ERROR(SendAccept(c, cred, side, j.rank, d));
  *peer = j;
  return Status::OK();
}

Status ReadAccept(Conn* c, const Credentials& cred, const JoinInfo& me,
                  ClientSide* s, Deadline d) {
  FrameType type;
  std::string p, proof;
  DT_RETURN_IF_ERROR(c->RecvFrame(&type, &p, d, 1024));
  if (type == FrameType::kReject) {
    s->foreign = p.rfind("it belongs to job", 0) == 0;
    return Status::PermissionDenied(c->peer() +
                                    " refused us: " + EscapePeerText(p));
  }
  size_t pos = 0;
  if (type != FrameType::kAccept || !GetString(p, &pos, 64, &proof)) {
    s->foreign = true;
    return Status::Unavailable(c->peer() + " sent an unexpected reply");
  }
  if (!cred.token.empty() &&
      !Same(proof, AcceptProof(cred, s->server_nonce, s->nonce, me.rank))) {
    return Status::PermissionDenied(c->peer() +
                                    " does not hold the job's secret");
  }
  return Status::OK();
}

}  // namespace dist_train
