// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// What the C API's files (c_api*.cc) share: the thread's last error, the
// guard that keeps every C++ exception inside the library, and the handle
// behind dt_comm.

#ifndef DIST_TRAIN_LIB_RUNTIME_C_API_INTERNAL_H_
#define DIST_TRAIN_LIB_RUNTIME_C_API_INTERNAL_H_

#include <exception>
#include <memory>
#include <string>

#include "dist_train/dist_train.h"
#include "dist_train/runtime.h"
#include "dist_train/status.h"

struct dt_comm {
  std::unique_ptr<dist_train::Communicator> impl;
};

namespace dist_train {
namespace capi {

// DT_OK for OK; otherwise records the message as this thread's
// dt_last_error() and returns the code. Never throws.
int Report(const Status& s) noexcept;

// DT_INTERNAL "<fn>: unexpected C++ exception: <what>". Never throws.
int ReportException(const char* fn, const char* what) noexcept;

// Runs `body` (returning a Status) with every exception turned into
// DT_INTERNAL, so none crosses the C ABI.
template <typename Body>
int Guard(const char* fn, Body&& body) noexcept {
  try {
    return Report(body());
  } catch (const std::exception& e) {
    return ReportException(fn, e.what());
  } catch (...) {
    return ReportException(fn, "not a std::exception");
  }
}

// InvalidArgument "<fn>: <what> is NULL" when p is NULL.
Status NotNull(const void* p, const char* fn, const char* what);

}  // namespace capi
}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_C_API_INTERNAL_H_
