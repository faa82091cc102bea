// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Reading the workers' output pipes to the end once the workers are gone:
// what a worker wrote just before it exited can still be in its pipe when
// it is reaped. Bounded, because a worker's own child (a daemon, a
// `sleep 1000 &`) may hold the pipe open, or keep writing, forever.

#ifndef DIST_TRAIN_LIB_LAUNCHER_PIPE_DRAIN_H_
#define DIST_TRAIN_LIB_LAUNCHER_PIPE_DRAIN_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

namespace dist_train {

// How long dt-run keeps reading pipes that are still open after the last
// worker of a group exited (docs/user-guide.md, "dt-run").
inline constexpr std::chrono::milliseconds kDrainGrace{2000};

// Called with (index into fds, bytes, length) for data, and with
// (index, nullptr, 0) once that pipe reached end of file.
using DrainSink = std::function<void(size_t, const char*, size_t)>;

// Reads every descriptor in `fds` (-1: skipped) until end of file, all of
// them at once, or until `deadline`; closes each one and sets it to -1.
// Signals interrupting the wait do not end it. Returns how many were cut
// off at the deadline (their data read so far was passed on; no
// end-of-file call for them).
size_t DrainToEnd(std::vector<int>* fds,
                  std::chrono::steady_clock::time_point deadline,
                  const DrainSink& sink);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_LAUNCHER_PIPE_DRAIN_H_
