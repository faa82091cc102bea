// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Quoting for generated shell scripts: every value that reaches the shell
// stays exactly one word, whatever it contains (spaces, quotes, $(),
// backticks, newlines).

#ifndef DIST_TRAIN_LIB_JOBGEN_SHELL_QUOTE_H_
#define DIST_TRAIN_LIB_JOBGEN_SHELL_QUOTE_H_

#include <string>
#include <string_view>
#include <vector>

namespace dist_train {

// POSIX single-quoting: 'it'\''s'. Plain words ([A-Za-z0-9_./:=@%+,-]) are
// left bare for readability, except those a shell reads as syntax where a
// command starts: assignments ('LD_PRELOAD=/x.so', 'A+=b') and reserved
// words ('if', 'time'). --lr=0.1 stays bare: --lr is no variable name.
std::string ShellQuote(std::string_view word);

// The words quoted and joined by spaces.
std::string ShellJoin(const std::vector<std::string>& words);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_SHELL_QUOTE_H_
