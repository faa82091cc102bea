// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "shell_quote.h"

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

// Runs `printf '%s\0' WORDS` through bash and returns what it printed.
std::vector<std::string> ThroughBash(const std::string& words) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    std::string script = "printf '%s\\0' " + words;
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
  std::vector<std::string> result;
  size_t start = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\0')
      result.push_back(out.substr(start, i - start)), start = i + 1;
  }
  return result;
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

}  // namespace
}  // namespace dist_train
