// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/star_agreement.h"

#include <algorithm>

#include "base/coding.h"

namespace dist_train {
namespace {

// One agreement frame from `conn`; an abort notice is the error it names.
Status ReadAgreement(Conn* conn, size_t max_len, std::string* payload,
                     Deadline deadline) {
  FrameType type;
  DT_RETURN_IF_ERROR(conn->RecvFrame(&type, payload, deadline,
                                     std::max<size_t>(max_len, 4096)));
  if (type == FrameType::kAbort) return Status::Unavailable(*payload);
  if (type == FrameType::kBye)
    return Status::Unavailable(conn->peer() + " left during set-up");
  if (type != FrameType::kAgree || payload->size() > max_len) {
    return Status::Internal(
        conn->peer() + " sent " + std::to_string(payload->size()) +
        " bytes of frame type " + std::to_string(static_cast<int>(type)) +
        " where a set-up agreement belongs");
  }
  return Status::OK();
}

Status SendToAll(std::vector<Conn>* ctrl, const std::string& payload,
                 Deadline deadline) {
  for (size_t r = 1; r < ctrl->size(); ++r)
    DT_RETURN_IF_ERROR(
        (*ctrl)[r].SendFrame(FrameType::kAgree, payload, deadline));
  return Status::OK();
}

std::string Encode(int32_t v) {
  std::string s;
  PutU32(&s, static_cast<uint32_t>(v));
  return s;
}

Status Decode(const Conn& from, const std::string& payload, int32_t* v) {
  size_t pos = 0;
  uint32_t u = 0;
  if (payload.size() != 4 || !GetU32(payload, &pos, &u)) {
    return Status::Internal(from.peer() + " sent " +
                            std::to_string(payload.size()) +
                            " bytes where a 4-byte flag belongs");
  }
  *v = static_cast<int32_t>(u);
  return Status::OK();
}

}  // namespace

Status StarBroadcast(std::vector<Conn>* ctrl, int rank, size_t max_len,
                     std::string* value, Deadline deadline) {
  if (rank == 0) {
    if (value->size() > max_len)
      return Status::InvalidArgument(
          "a set-up value of " + std::to_string(value->size()) +
          " bytes (limit " + std::to_string(max_len) + ")");
    return SendToAll(ctrl, *value, deadline);
  }
  return ReadAgreement(&(*ctrl)[0], max_len, value, deadline);
}

Status StarAllMin(std::vector<Conn>* ctrl, int rank, int32_t* value,
                  Deadline deadline) {
  std::string payload;
  if (rank != 0) {
    Conn* root = &(*ctrl)[0];
    DT_RETURN_IF_ERROR(
        root->SendFrame(FrameType::kAgree, Encode(*value), deadline));
    DT_RETURN_IF_ERROR(ReadAgreement(root, 4, &payload, deadline));
    return Decode(*root, payload, value);
  }
  // Each rank's flag waits in its socket until we get to it: in rank
  // order, no rank waits for another.
  int32_t min = *value;
  for (size_t r = 1; r < ctrl->size(); ++r) {
    int32_t v = 0;
    DT_RETURN_IF_ERROR(ReadAgreement(&(*ctrl)[r], 4, &payload, deadline));
    DT_RETURN_IF_ERROR(Decode((*ctrl)[r], payload, &v));
    min = std::min(min, v);
  }
  *value = min;
  return SendToAll(ctrl, Encode(min), deadline);
}

}  // namespace dist_train
