// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/shell_quote.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>

namespace dist_train {
namespace {

TEST(ShellQuoteTest, PlainWordsStayBare) {
  EXPECT_EQ(ShellQuote("train.py"), "train.py");
  EXPECT_EQ(ShellQuote("--lr=0.1"), "--lr=0.1");
  EXPECT_EQ(ShellQuote("logs/%x-%j.out"), "logs/%x-%j.out");
}

TEST(ShellQuoteTest, EverythingElseIsSingleQuoted) {
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$(rm -rf /)"), "'$(rm -rf /)'");
  EXPECT_EQ(ShellQuote("`id`"), "'`id`'");
  EXPECT_EQ(ShellQuote("a\nb"), "'a\nb'");
  EXPECT_EQ(ShellQuote("~"), "'~'");
  EXPECT_EQ(ShellQuote("*"), "'*'");
}

// Where a command starts, NAME=value is an assignment and `if` a reserved
// word: a custom command [LD_PRELOAD=/x.so, python3] must run a program
// named LD_PRELOAD=/x.so, not set the variable for python3.
TEST(ShellQuoteTest, AssignmentsAndReservedWordsAreQuoted) {
  const struct {
    const char* word;
    const char* quoted;
  } cases[] = {
      {"LD_PRELOAD=/x.so", "'LD_PRELOAD=/x.so'"},
      {"A=", "'A='"},
      {"_x1=y", "'_x1=y'"},
      {"PATH+=/evil", "'PATH+=/evil'"},
      {"if", "'if'"},
      {"time", "'time'"},
      {"function", "'function'"},
      {"coproc", "'coproc'"},
      {"--lr=0.1", "--lr=0.1"},
      {"1A=x", "1A=x"},
      {"a.b=c", "a.b=c"},
      {"+=x", "+=x"},
      {"iff", "iff"},
      {"Time", "Time"},
  };
  for (const auto& c : cases) EXPECT_EQ(ShellQuote(c.word), c.quoted) << c.word;
}

// What bash prints on stdout running `script`.
std::string BashOutput(const std::string& script) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    execl("/bin/bash", "bash", "--noprofile", "--norc", "-c", script.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

// Runs `printf '%s\0' WORDS` through bash and returns what it printed.
std::vector<std::string> ThroughBash(const std::string& words) {
  std::string out = BashOutput("printf '%s\\0' " + words);
  std::vector<std::string> result;
  size_t start = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\0')
      result.push_back(out.substr(start, i - start)), start = i + 1;
  }
  return result;
}

// As the first words of a command line: bash looks for a program called
// LD_PRELOAD=/x.so instead of setting the variable and running echo.
TEST(ShellQuoteTest, AQuotedFirstWordIsNeverAnAssignment) {
  std::string line = ShellJoin({"LD_PRELOAD=/nonexistent.so", "echo", "ran"});
  EXPECT_EQ(BashOutput(line + " 2>/dev/null; echo \" $?\""), " 127\n") << line;
  line = ShellJoin({"if", "true;", "then", "echo", "ran;", "fi"});
  EXPECT_EQ(BashOutput(line + " 2>/dev/null; echo \" $?\""), " 127\n") << line;
}

TEST(ShellQuoteTest, PropertyEveryStringSurvivesBashAsOneWord) {
  const std::string alphabet = "ab Z09 '\"$()`\\\n\t;&|<>*?[]{}!#~=%-_./:,+@";
  std::mt19937 rng(12345);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> words;
    for (int w = 0; w < 8; ++w) {
      std::string s;
      int len = static_cast<int>(rng() % 12);
      for (int i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
      words.push_back(s);
    }
    EXPECT_EQ(ThroughBash(ShellJoin(words)), words) << ShellJoin(words);
  }
}

std::string Refs(const std::string& word) {
  std::string out, why;
  EXPECT_TRUE(QuoteWithRefs(word, &out, &why)) << word << ": " << why;
  return out;
}

std::string RefError(const std::string& word) {
  std::string out, why;
  EXPECT_FALSE(QuoteWithRefs(word, &out, &why)) << word;
  return why;
}

TEST(QuoteWithRefsTest, BracedNamesAreLeftToTheShellTheRestIsQuoted) {
  EXPECT_EQ(Refs("--lr=0.1"), "--lr=0.1");
  EXPECT_EQ(Refs("--ckpt=${DT_RUN_DIR}/c.pt"), "--ckpt=\"${DT_RUN_DIR}\"/c.pt");
  EXPECT_EQ(Refs("${A}${B}"), "\"${A}\"\"${B}\"");
  EXPECT_EQ(Refs("it's ${HOME} *"), "'it'\\''s '\"${HOME}\"' *'");
  EXPECT_EQ(Refs("$${HOME}"), "'${HOME}'");
  EXPECT_EQ(Refs("$HOME"), "'$HOME'");
  EXPECT_EQ(Refs("LD_PRELOAD=${X}"), "'LD_PRELOAD='\"${X}\"");
}

TEST(QuoteWithRefsTest, AnythingElseAfterDollarBraceIsAnError) {
  EXPECT_EQ(RefError("${1}"),
            "'${1}' is no ${NAME} reference (only ${NAME} is expanded; write "
            "$${ for a literal ${)");
  EXPECT_EQ(RefError("a${HOME:-x}b").substr(0, 15), "'${HOME:-x}' is");
  EXPECT_EQ(RefError("x${open").substr(0, 11), "'${open' is");
  EXPECT_EQ(RefError("${}").substr(0, 8), "'${}' is");
}

// Through bash with A, B and HOME set: references expand, each word stays
// one word, whatever the values hold.
TEST(QuoteWithRefsTest, ThroughBashEachWordStaysOneWord) {
  std::string line = "A='x y' B='*' HOME=/h; printf '<%s>\\n' " +
                     Refs("--a=${A}") + " " + Refs("${B}") + " " +
                     Refs("$${HOME}/${HOME}") + " " + Refs("$HOME");
  EXPECT_EQ(BashOutput(line), "<--a=x y>\n<*>\n<${HOME}//h>\n<$HOME>\n")
      << line;
}

}  // namespace
}  // namespace dist_train
