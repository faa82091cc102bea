// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// What the fuzz targets share: an invariant check that crashes (so
// libFuzzer keeps the input) with a message saying which property broke,
// and the input split into lines.

#ifndef DIST_TRAIN_FUZZ_FUZZ_CHECK_H_
#define DIST_TRAIN_FUZZ_FUZZ_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace dist_train {

// `text` with every byte outside printable ASCII as \xNN.
inline std::string FuzzShown(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

// Aborts with `what` (and `detail`, escaped) when `ok` is false.
inline void FuzzCheck(bool ok, const char* what,
                      const std::string& detail = "") {
  if (ok) return;
  fprintf(stderr, "fuzz invariant broken: %s%s%s\n", what,
          detail.empty() ? "" : ": ", FuzzShown(detail).c_str());
  abort();
}

inline std::string_view FuzzText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// The input's lines, without their '\n'.
inline std::vector<std::string> FuzzLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace dist_train

#endif  // DIST_TRAIN_FUZZ_FUZZ_CHECK_H_
