// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// HostTransport: the public collectives' contracts on top of a host
// transport's in-place forms.

#include "runtime/transport.h"

#include <cstring>

#include "runtime/reduce.h"

namespace dist_train {

std::string HostTransport::Ranks() const {
  return "(" + std::to_string(size_) + " ranks)";
}

Status HostTransport::AllReduce(const void* send, void* recv, size_t count,
                                DataType type, ReduceOp op) {
  if (send != recv && count > 0)
    std::memmove(recv, send, count * DataTypeSize(type));
  if (size_ > 1)
    DT_RETURN_IF_ERROR(
        AllReduceInPlace(static_cast<char*>(recv), count, type, op));
  if (op == ReduceOp::kAvg) DivideBy(recv, count, type, size_);
  return Status::OK();
}

Status HostTransport::ReduceScatter(const void* send, void* recv, size_t count,
                                    DataType type, ReduceOp op) {
  const char* from = static_cast<const char*>(send);
  char* to = static_cast<char*>(recv);
  if (size_ > 1) {
    DT_RETURN_IF_ERROR(ReduceScatterInto(from, to, count, type, op));
  } else if (count > 0) {
    std::memmove(to, from, count * DataTypeSize(type));
  }
  if (op == ReduceOp::kAvg) DivideBy(recv, count, type, size_);
  return Status::OK();
}

Status HostTransport::AllGather(const void* send, void* recv, size_t count,
                                DataType type) {
  const size_t piece = count * DataTypeSize(type);
  char* buf = static_cast<char*>(recv);
  if (piece > 0) std::memmove(buf + piece * rank_, send, piece);
  if (size_ == 1) return Status::OK();
  return AllGatherInPlace(buf, piece);
}

Status HostTransport::Broadcast(void* buf, size_t count, DataType type,
                                int root) {
  if (size_ == 1) return Status::OK();
  return BroadcastBytes(static_cast<char*>(buf), count * DataTypeSize(type),
                        root);
}

}  // namespace dist_train
