// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "launcher/pipe_drain.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace dist_train {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Collected {
  std::vector<std::string> data;
  std::vector<int> ends;
  DrainSink Sink() {
    return [this](size_t i, const char* p, size_t n) {
      if (p == nullptr) return void(++ends[i]);
      data[i].append(p, n);
    };
  }
};

// A child that writes `lines` numbered lines to the pipe's write end and
// exits at once; the read end is returned.
int Writer(int lines, pid_t* pid) {
  int p[2];
  EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
  *pid = fork();
  if (*pid == 0) {
    close(p[0]);
    std::string all;
    for (int i = 1; i <= lines; ++i) all += std::to_string(i) + "\n";
    size_t off = 0;
    while (off < all.size()) {
      ssize_t n = write(p[1], all.data() + off, all.size() - off);
      if (n <= 0) _exit(1);
      off += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(p[1]);
  return p[0];
}

std::string Lines(int lines) {
  std::string all;
  for (int i = 1; i <= lines; ++i) all += std::to_string(i) + "\n";
  return all;
}

TEST(PipeDrainTest, EveryPipeIsReadToTheEndAfterItsWriterExited) {
  // More than a pipe holds: the writers block until the drain reads.
  const std::vector<int> sizes = {0, 1, 20000, 50000};
  std::vector<int> fds;
  std::vector<pid_t> pids(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i)
    fds.push_back(Writer(sizes[i], &pids[i]));
  Collected got{std::vector<std::string>(fds.size()),
                std::vector<int>(fds.size())};
  EXPECT_EQ(DrainToEnd(&fds, Clock::now() + milliseconds(30000), got.Sink()),
            0u);
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(got.data[i], Lines(sizes[i])) << "pipe " << i;
    EXPECT_EQ(got.ends[i], 1) << "pipe " << i;
    EXPECT_EQ(fds[i], -1);
    int status = 0;
    waitpid(pids[i], &status, 0);
  }
}

TEST(PipeDrainTest, APipeSomeoneKeepsOpenIsCutOffAtTheDeadline) {
  // We hold the write end, like a worker's child left running: what was
  // written arrives, and the wait ends at the deadline, not at EOF.
  int held[2], done[2];
  ASSERT_EQ(pipe2(held, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(done, O_CLOEXEC), 0);
  ASSERT_EQ(write(held[1], "partial", 7), 7);
  close(done[1]);
  std::vector<int> fds = {held[0], -1, done[0]};
  Collected got{std::vector<std::string>(3), std::vector<int>(3)};
  auto start = Clock::now();
  EXPECT_EQ(DrainToEnd(&fds, start + milliseconds(300), got.Sink()), 1u);
  auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(3000));
  EXPECT_EQ(got.data[0], "partial");
  EXPECT_EQ(got.ends, (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(fds, (std::vector<int>{-1, -1, -1}));
  close(held[1]);
}

TEST(PipeDrainTest, AWriterThatNeverStopsCannotHoldTheDrainPastTheDeadline) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    for (;;) {
      if (write(p[1], "more\n", 5) <= 0) _exit(0);
    }
  }
  close(p[1]);
  std::vector<int> fds = {p[0]};
  Collected got{std::vector<std::string>(1), std::vector<int>(1)};
  auto start = Clock::now();
  EXPECT_EQ(DrainToEnd(&fds, start + milliseconds(300), got.Sink()), 1u);
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_FALSE(got.data[0].empty());
  int status = 0;
  waitpid(pid, &status, 0);  // its next write fails: EPIPE
}

}  // namespace
}  // namespace dist_train
