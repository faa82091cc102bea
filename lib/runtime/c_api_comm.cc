// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The C API's communicator: dist_train::Communicator behind dt_comm, with
// the dtype, op and buffer checks a C caller cannot get from the compiler.

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "dist_train/dist_train.h"
#include "dist_train/runtime.h"
#include "runtime/c_api_internal.h"

namespace dist_train {
namespace capi {
namespace {

Status ToType(const char* fn, int dtype, DataType* type) {
  if (dtype < DT_FLOAT32 || dtype > DT_FLOAT16)
    return Status::InvalidArgument(std::string(fn) + ": dtype " +
                                   std::to_string(dtype) +
                                   " is not a dt_dtype (0 to 5)");
  *type = static_cast<DataType>(dtype);  // same order as dt_dtype
  return Status::OK();
}

Status ToOp(const char* fn, int op, ReduceOp* out) {
  if (op < DT_SUM || op > DT_AVG)
    return Status::InvalidArgument(std::string(fn) + ": op " +
                                   std::to_string(op) +
                                   " is not a dt_op (0 to 3)");
  *out = static_cast<ReduceOp>(op);  // same order as dt_op
  return Status::OK();
}

// A buffer of `count` elements of `per` times `type`'s size: NULL only
// when empty, and its size in bytes must not overflow.
Status CheckBuffer(const char* fn, const char* what, const void* p,
                   size_t count, size_t per, DataType type) {
  const size_t unit = DataTypeSize(type) * per;
  if (count != 0 && count > SIZE_MAX / unit)
    return Status::InvalidArgument(std::string(fn) + ": count " +
                                   std::to_string(count) +
                                   " is too large for " + what);
  if (count == 0) return Status::OK();
  return NotNull(p, fn, what);
}

// What every collective checks first: the handle and the element type.
Status CheckCall(const char* fn, const dt_comm* comm, int dtype,
                 DataType* type) {
  DT_RETURN_IF_ERROR(NotNull(comm, fn, "comm"));
  return ToType(fn, dtype, type);
}

}  // namespace
}  // namespace capi
}  // namespace dist_train

using dist_train::DataType;
using dist_train::ReduceOp;
using dist_train::Status;
using dist_train::capi::CheckBuffer;
using dist_train::capi::CheckCall;
using dist_train::capi::Guard;
using dist_train::capi::NotNull;
using dist_train::capi::ToOp;

extern "C" {

size_t dt_dtype_size(int dtype) {
  if (dtype < DT_FLOAT32 || dtype > DT_FLOAT16) return 0;
  return dist_train::DataTypeSize(static_cast<DataType>(dtype));
}

int dt_comm_create(dt_comm** out) {
  return Guard("dt_comm_create", [&] {
    DT_RETURN_IF_ERROR(NotNull(out, "dt_comm_create", "out"));
    *out = nullptr;
    std::unique_ptr<dist_train::Communicator> impl;
    DT_RETURN_IF_ERROR(
        dist_train::Communicator::Create(dist_train::Options{}, &impl));
    *out = new dt_comm{std::move(impl)};
    return Status::OK();
  });
}

void dt_comm_destroy(dt_comm* comm) {
  // ~Communicator says goodbye to peers and does not throw; delete of a
  // handle cannot either.
  delete comm;
}

int dt_comm_rank(const dt_comm* comm) {
  return comm == nullptr ? -1 : comm->impl->rank();
}

int dt_comm_size(const dt_comm* comm) {
  return comm == nullptr ? -1 : comm->impl->size();
}

size_t dt_comm_describe(const dt_comm* comm, char* buf, size_t size) {
  std::string text;
  if (comm != nullptr) {
    try {
      text = comm->impl->Describe();
    } catch (...) {
      text.clear();  // out of memory: describe nothing rather than throw
    }
  }
  if (buf != nullptr && size > 0) {
    const size_t n = text.size() < size ? text.size() : size - 1;
    memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return text.size();
}

int dt_comm_all_reduce(dt_comm* comm, const void* send, void* recv,
                       size_t count, int dtype, int op) {
  const char* fn = "dt_comm_all_reduce";
  return Guard(fn, [&] {
    DataType type;
    ReduceOp reduce;
    DT_RETURN_IF_ERROR(CheckCall(fn, comm, dtype, &type));
    DT_RETURN_IF_ERROR(ToOp(fn, op, &reduce));
    DT_RETURN_IF_ERROR(CheckBuffer(fn, "send", send, count, 1, type));
    DT_RETURN_IF_ERROR(CheckBuffer(fn, "recv", recv, count, 1, type));
    return comm->impl->AllReduce(send, recv, count, type, reduce);
  });
}

int dt_comm_broadcast(dt_comm* comm, void* buf, size_t count, int dtype,
                      int root) {
  const char* fn = "dt_comm_broadcast";
  return Guard(fn, [&] {
    DataType type;
    DT_RETURN_IF_ERROR(CheckCall(fn, comm, dtype, &type));
    DT_RETURN_IF_ERROR(CheckBuffer(fn, "buf", buf, count, 1, type));
    return comm->impl->Broadcast(buf, count, type, root);
  });
}

int dt_comm_all_gather(dt_comm* comm, const void* send, void* recv,
                       size_t count, int dtype) {
  const char* fn = "dt_comm_all_gather";
  return Guard(fn, [&] {
    DataType type;
    DT_RETURN_IF_ERROR(CheckCall(fn, comm, dtype, &type));
    const size_t n = static_cast<size_t>(comm->impl->size());
    DT_RETURN_IF_ERROR(CheckBuffer(fn, "send", send, count, 1, type));
    DT_RETURN_IF_ERROR(CheckBuffer(fn, "recv", recv, count, n, type));
    return comm->impl->AllGather(send, recv, count, type);
  });
}

int dt_comm_reduce_scatter(dt_comm* comm, const void* send, void* recv,
                           size_t count, int dtype, int op) {
  const char* fn = "dt_comm_reduce_scatter";
  return Guard(fn, [&] {
    DataType type;
    ReduceOp reduce;
    DT_RETURN_IF_ERROR(CheckCall(fn, comm, dtype, &type));
    DT_RETURN_IF_ERROR(ToOp(fn, op, &reduce));
    const size_t n = static_cast<size_t>(comm->impl->size());
    DT_RETURN_IF_ERROR(CheckBuffer(fn, "send", send, count, n, type));
    DT_RETURN_IF_ERROR(CheckBuffer(fn, "recv", recv, count, 1, type));
    return comm->impl->ReduceScatter(send, recv, count, type, reduce);
  });
}

int dt_comm_barrier(dt_comm* comm) {
  return Guard("dt_comm_barrier", [&] {
    DT_RETURN_IF_ERROR(NotNull(comm, "dt_comm_barrier", "comm"));
    return comm->impl->Barrier();
  });
}

}  // extern "C"
