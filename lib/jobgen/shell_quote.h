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

// A command word in which ${NAME} references are left to the shell and
// everything else is quoted: "--ckpt=${DT_RUN_DIR}/c.pt" becomes
// --ckpt="${DT_RUN_DIR}"/c.pt, still one word; "$${" is a literal "${",
// and "$NAME" without braces stays literal. False, with `error` saying
// why, when a "${" starts anything but a reference to a variable name
// ("${1}", "${HOME:-x}", an unclosed "${").
bool QuoteWithRefs(std::string_view word, std::string* out, std::string* error);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_SHELL_QUOTE_H_
