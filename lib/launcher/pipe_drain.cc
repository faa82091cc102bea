// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/pipe_drain.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace dist_train {
namespace {

using Clock = std::chrono::steady_clock;

int MillisUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1000));
}

// One read from a ready pipe; closes it at end of file (or on an error
// other than EINTR/EAGAIN, which ends the stream just the same).
void ReadOnce(std::vector<int>* fds, size_t i, const DrainSink& sink) {
  char buf[65536];
  ssize_t n = read((*fds)[i], buf, sizeof(buf));
  if (n > 0) return sink(i, buf, static_cast<size_t>(n));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  close((*fds)[i]);
  (*fds)[i] = -1;
  sink(i, nullptr, 0);
}

size_t CloseOpen(std::vector<int>* fds) {
  size_t open = 0;
  for (int& fd : *fds) {
    if (fd < 0) continue;
    close(fd);
    fd = -1;
    ++open;
  }
  return open;
}

}  // namespace

size_t DrainToEnd(std::vector<int>* fds, Clock::time_point deadline,
                  const DrainSink& sink) {
  for (;;) {
    std::vector<pollfd> polled;
    for (int fd : *fds) polled.push_back({fd, POLLIN, 0});
    bool any =
        std::any_of(fds->begin(), fds->end(), [](int fd) { return fd >= 0; });
    if (!any) return 0;
    if (Clock::now() >= deadline) return CloseOpen(fds);
    int ready = poll(polled.data(), polled.size(), MillisUntil(deadline));
    if (ready < 0 && errno != EINTR) return CloseOpen(fds);
    for (size_t i = 0; ready > 0 && i < polled.size(); ++i) {
      if (polled[i].fd >= 0 && polled[i].revents != 0) ReadOnce(fds, i, sink);
    }
  }
}

}  // namespace dist_train
