// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "shell_quote.h"

#include <cstring>

namespace dist_train {

std::string ShellQuote(std::string_view word) {
  static const char kPlain[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./"
      ":=@%+,-";
  bool plain = !word.empty() && word[0] != '=' && word[0] != '%';
  for (char c : word)
    plain = plain && std::strchr(kPlain, c) != nullptr && c != '\0';
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words)
    out += (out.empty() ? "" : " ") + ShellQuote(w);
  return out;
}

}  // namespace dist_train
