// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/peer_text.h"

#include <cstdio>

namespace dist_train {

std::string EscapePeerText(const std::string& text, size_t max_len) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_len; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  if (text.size() > max_len) out += "...";
  return out;
}

std::string RefusalLog::Summary() const {
  if (seen_ <= burst_) return "";
  return "suppressed " + std::to_string(seen_ - burst_) + " more refusals";
}

}  // namespace dist_train
