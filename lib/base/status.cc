// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "dist_train/status.h"

namespace dist_train {

namespace {
const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kInvalidArgument:
      return "Invalid argument";
    case Status::Code::kNotFound:
      return "Not found";
    case Status::Code::kIOError:
      return "IO error";
    case Status::Code::kUnavailable:
      return "Unavailable";
    case Status::Code::kTimeout:
      return "Timeout";
    case Status::Code::kPermissionDenied:
      return "Permission denied";
    case Status::Code::kInternal:
      return "Internal error";
  }
  return "Unknown";
}
}  // namespace

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace dist_train
