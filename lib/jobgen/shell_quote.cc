// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/shell_quote.h"

#include <cstring>

namespace dist_train {
namespace {

bool IsName(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

// NAME=value or NAME+=value: where a command starts (a custom command's
// first word) bash reads it as an assignment, so LD_PRELOAD=/x.so would set
// a variable for the next word instead of being run.
bool IsAssignment(std::string_view word) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos) return false;
  std::string_view name = word.substr(0, eq);
  if (!name.empty() && name.back() == '+') name.remove_suffix(1);
  return IsName(name);
}

// bash's reserved words made of plain characters: as a first word they
// would start a compound command (if, while, ...) instead of a program.
bool IsReservedWord(std::string_view word) {
  static const char* const kReserved[] = {
      "case",   "coproc", "do",   "done",     "elif", "else",
      "esac",   "fi",     "for",  "function", "if",   "in",
      "select", "then",   "time", "until",    "while"};
  for (const char* r : kReserved) {
    if (word == r) return true;
  }
  return false;
}

bool IsPlain(std::string_view word) {
  static const char kPlain[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./"
      ":=@%+,-";
  if (word.empty() || word[0] == '=' || word[0] == '%') return false;
  for (char c : word) {
    if (c == '\0' || std::strchr(kPlain, c) == nullptr) return false;
  }
  return !IsAssignment(word) && !IsReservedWord(word);
}

}  // namespace

std::string ShellQuote(std::string_view word) {
  if (IsPlain(word)) return std::string(word);
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

bool QuoteWithRefs(std::string_view word, std::string* out,
                   std::string* error) {
  std::string result, literal;
  bool refs = false;
  for (size_t i = 0; i < word.size();) {
    if (word.compare(i, 3, "$${") == 0) {
      literal += "${", i += 3;
      continue;
    }
    if (word.compare(i, 2, "${") != 0) {
      literal += word[i++];
      continue;
    }
    size_t close = word.find('}', i + 2);
    std::string_view name = close == std::string_view::npos
                                ? ""
                                : word.substr(i + 2, close - i - 2);
    if (!IsName(name)) {
      *error = "'" +
               std::string(word.substr(i, close == std::string_view::npos
                                              ? std::string_view::npos
                                              : close - i + 1)) +
               "' is no ${NAME} reference (only ${NAME} is expanded; write "
               "$${ for a literal ${)";
      return false;
    }
    if (!literal.empty()) result += ShellQuote(literal), literal.clear();
    result += "\"${" + std::string(name) + "}\"";
    refs = true;
    i = close + 1;
  }
  if (!refs) {
    *out = ShellQuote(literal);
    return true;
  }
  if (!literal.empty()) result += ShellQuote(literal);
  *out = result;
  return true;
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words)
    out += (out.empty() ? "" : " ") + ShellQuote(w);
  return out;
}

}  // namespace dist_train
