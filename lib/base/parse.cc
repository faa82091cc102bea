// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/parse.h"

#include <algorithm>

namespace dist_train {

bool ParseUint(std::string_view text, uint64_t min, uint64_t max,
               uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (value < min || value > max) return false;
  *out = value;
  return true;
}

bool ParseBool(std::string_view text, bool* out) {
  for (const char* t : {"1", "true", "yes", "on"}) {
    if (text == t) return *out = true, true;
  }
  for (const char* f : {"0", "false", "no", "off"}) {
    if (text == f) return *out = false, true;
  }
  return false;
}

bool ParseKeyValueLines(std::string_view text,
                        std::map<std::string, std::string>* out) {
  out->clear();
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.empty()) return true;
  for (std::string_view line : Split(text, '\n')) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos ||
        !out->emplace(line.substr(0, eq), line.substr(eq + 1)).second)
      return false;
  }
  return true;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t pos = text.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

namespace {
// Optimal-string-alignment distance: a swap of two adjacent letters ("mdoe")
// counts as one edit, like a single insertion, deletion or substitution.
size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t cols = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * cols);
  auto at = [&](size_t i, size_t j) -> size_t& { return d[i * cols + j]; };
  for (size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min(
          {at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}
}  // namespace

std::string NearestWord(std::string_view word,
                        const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(1, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    size_t d = EditDistance(word, candidate);
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best;
}

std::string JoinAlternatives(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size()) ? " or " : ", ";
    out += words[i];
  }
  return out;
}

std::string ShownValue(std::string_view text) {
  std::string out;
  std::string_view shown = text.substr(0, kShownValueMax);
  for (char c : shown) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
      continue;
    }
    static const char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 0xf];
  }
  if (shown.size() < text.size()) {
    out += "... (" + std::to_string(text.size()) + " bytes)";
  }
  return out;
}

}  // namespace dist_train
