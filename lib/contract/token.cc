// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/token.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace dist_train {

Status GenerateToken(std::string* token) {
  unsigned char bytes[kTokenHexDigits / 2];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::IOError(std::string("getrandom: ") + strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  *token = out;
  return Status::OK();
}

Status CheckToken(std::string_view token) {
  bool ok = token.size() == kTokenHexDigits;
  for (char c : token)
    ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (ok) return Status::OK();
  return Status::InvalidArgument(std::string(kTokenVar) + " must be " +
                                 std::to_string(kTokenHexDigits) +
                                 " lowercase hex digits (got " +
                                 std::to_string(token.size()) + " characters)");
}

Status JobToken(TokenRule rule, const char* existing, std::string* token,
                bool* made) {
  *made = false;
  if (existing != nullptr && rule != TokenRule::kNewJob) {
    Status valid = CheckToken(existing);
    if (valid.ok()) {
      *token = existing;
      return valid;
    }
    if (rule == TokenRule::kJobStep) return valid;
  }
  Status s = GenerateToken(token);
  if (!s.ok())
    return Status::IOError(std::string("cannot make ") + kTokenVar + ": " +
                           s.message());
  *made = true;
  return s;
}

}  // namespace dist_train
