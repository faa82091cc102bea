// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Strict parsing helpers shared by every input path (option words,
// plugstack arguments, environment values). "5x", "", "+5", " 5" and
// out-of-range values are rejected; nothing falls back to a default.

#ifndef DIST_TRAIN_LIB_BASE_PARSE_H_
#define DIST_TRAIN_LIB_BASE_PARSE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dist_train {

// Parses a decimal integer in [min, max]. Returns false on any other input.
bool ParseUint(std::string_view text, uint64_t min, uint64_t max,
               uint64_t* out);

// Parses yes/no style booleans: 1/true/yes/on and 0/false/no/off.
bool ParseBool(std::string_view text, bool* out);

// Splits on `sep`, keeping empty fields ("a,,b" -> {"a", "", "b"}).
std::vector<std::string_view> Split(std::string_view text, char sep);

// Parses "key=value" lines (the last may lack its newline), each key once.
// False on a line without '=' or a repeated key.
bool ParseKeyValueLines(std::string_view text,
                        std::map<std::string, std::string>* out);

// Returns the candidate closest to `word` by edit distance when it is close
// enough to be a plausible typo (distance <= max(1, len/3)), else "".
std::string NearestWord(std::string_view word,
                        const std::vector<std::string>& candidates);

// "a, b or c" from {"a", "b", "c"}, for error messages.
std::string JoinAlternatives(const std::vector<std::string>& words);

// An input value as error messages show it: bytes outside printable ASCII
// as \xNN (a value cannot forge a log line or send terminal escapes), and a
// value longer than kShownValueMax bytes cut there with "... (N bytes)"
// appended (a 1 MiB environment value must not become a 1 MiB log line).
constexpr size_t kShownValueMax = 64;
std::string ShownValue(std::string_view text);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_PARSE_H_
