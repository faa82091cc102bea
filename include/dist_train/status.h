// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Status: the single error type of dist-train. A Status is either OK or
// carries a code and a human-readable message that names what was wrong and
// where (e.g. "--dist-train: unknown word 'mdoe=task'").
//
// Thread-safety: a Status is a value; distinct objects may be used from
// different threads without synchronisation.

#ifndef DIST_TRAIN_STATUS_H_
#define DIST_TRAIN_STATUS_H_

#include <string>
#include <utility>

#include "dist_train/export.h"

namespace dist_train {

class [[nodiscard]] DT_EXPORT Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,   // bad user/admin/environment input
    kNotFound,          // a required value or resource is missing
    kIOError,           // a system call failed
    kUnavailable,       // a peer or service cannot be reached (yet)
    kTimeout,           // a deadline passed
    kPermissionDenied,  // authentication or authorisation failed
    kInternal,          // a bug in dist-train
  };

  // Creates an OK status.
  Status() = default;

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status NotFound(std::string msg) {
    return Status(Code::kNotFound, std::move(msg));
  }
  static Status IOError(std::string msg) {
    return Status(Code::kIOError, std::move(msg));
  }
  static Status Unavailable(std::string msg) {
    return Status(Code::kUnavailable, std::move(msg));
  }
  static Status Timeout(std::string msg) {
    return Status(Code::kTimeout, std::move(msg));
  }
  static Status PermissionDenied(std::string msg) {
    return Status(Code::kPermissionDenied, std::move(msg));
  }
  static Status Internal(std::string msg) {
    return Status(Code::kInternal, std::move(msg));
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // The message without a code prefix; empty for OK.
  const std::string& message() const { return message_; }
  // "OK" or "<code name>: <message>", for logs.
  std::string ToString() const;

  // Statuses must be looked at ([[nodiscard]]); this says, where a failure
  // changes nothing (a goodbye to a peer that may be gone), that it was
  // ignored on purpose.
  void IgnoreError() const {}

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// Returns from the enclosing function when `expr` yields a non-OK Status.
#define DT_STATUS_CONCAT_(a, b) a##b
#define DT_STATUS_CONCAT(a, b) DT_STATUS_CONCAT_(a, b)
#define DT_RETURN_IF_ERROR(expr) \
  DT_RETURN_IF_ERROR_IMPL(DT_STATUS_CONCAT(dt_status_, __COUNTER__), expr)
#define DT_RETURN_IF_ERROR_IMPL(var, expr) \
  do {                                     \
    ::dist_train::Status var = (expr);     \
    if (!var.ok()) return var;             \
  } while (0)

}  // namespace dist_train

#endif  // DIST_TRAIN_STATUS_H_
