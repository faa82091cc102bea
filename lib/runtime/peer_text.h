// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Text that came from a peer we have not authenticated (a claimed job
// identity, a REJECT reason) goes into our log lines only through here:
// escaped and cut short, so a stranger can neither forge a line (newlines,
// terminal escapes) nor make us write much.

#ifndef DIST_TRAIN_LIB_RUNTIME_PEER_TEXT_H_
#define DIST_TRAIN_LIB_RUNTIME_PEER_TEXT_H_

#include <cstddef>
#include <string>

namespace dist_train {

constexpr size_t kPeerTextMax = 128;

// Printable ASCII as is, every other byte as "\xNN"; more than `max_len`
// input bytes end in "...". Idempotent (a backslash stays one), so text
// escaped by one side and again by the other reads the same.
std::string EscapePeerText(const std::string& text,
                           size_t max_len = kPeerTextMax);

// Log lines about refused strangers: the first `burst` are written, the
// rest only counted, and Summary() tells how many were left out. Not
// thread-safe: one owner, who writes the lines itself (never under a lock).
class RefusalLog {
 public:
  explicit RefusalLog(int burst) : burst_(burst) {}
  // Whether the caller should write this refusal's line now.
  bool Admit() { return ++seen_ <= burst_; }
  // "" when nothing was suppressed, else e.g. "suppressed 2990 more
  // refusals".
  std::string Summary() const;

 private:
  int burst_;
  long seen_ = 0;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_PEER_TEXT_H_
