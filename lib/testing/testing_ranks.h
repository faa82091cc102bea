// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Test helpers: run one forked process per rank on this machine. A child
// reports failure through its exit code and stderr. Each test's ranks get
// their own job identity, so a stray rank of an earlier test (or of another
// test process) that finds a reused port is refused, not joined.

#ifndef DIST_TRAIN_LIB_TESTING_TESTING_RANKS_H_
#define DIST_TRAIN_LIB_TESTING_TESTING_RANKS_H_

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "dist_train/runtime.h"

// Fails a child process with a message on stderr.
#define CHILD_CHECK(cond, ...)                           \
  do {                                                   \
    if (!(cond)) {                                       \
      fprintf(stderr, "rank check failed: %s: ", #cond); \
      fprintf(stderr, __VA_ARGS__);                      \
      fprintf(stderr, "\n");                             \
      return 1;                                          \
    }                                                    \
  } while (0)

namespace dist_train {
namespace testing_ranks {

inline const std::string kToken(64, 'e');

inline int FreePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

// "test:PID:Suite.Name" of the running test.
inline std::string TestIdentity() {
  const ::testing::TestInfo* t =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name =
      t ? std::string(t->test_suite_name()) + "." + t->name() : "none";
  return "test:" + std::to_string(getpid()) + ":" + name;
}

inline Options Base(int n, int port) {
  Options o;
  o.world_size = n;
  o.master_addr = "127.0.0.1";
  o.master_port = port;
  o.job_identity = TestIdentity();
  o.job_token = kToken;
  o.timeout_seconds = 20;
  return o;
}

using RankFn = std::function<int(const Options&)>;

// Forks one process per rank (rank r waits delay[r] ms first); returns
// their exit codes (128+signal when killed).
inline std::vector<int> RunRanks(int n, const Options& base, const RankFn& fn,
                                 std::vector<int> skip = {},
                                 std::vector<int> delay_ms = {}) {
  std::vector<pid_t> pids(n, -1);
  for (int r = 0; r < n; ++r) {
    if (std::count(skip.begin(), skip.end(), r)) continue;
    pids[r] = fork();
    if (pids[r] == 0) {
      if (r < static_cast<int>(delay_ms.size()))
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms[r]));
      Options o = base;
      o.rank = r;
      fflush(stderr);
      _exit(fn(o));
    }
  }
  std::vector<int> codes(n, -1);
  for (int r = 0; r < n; ++r) {
    if (pids[r] < 0) continue;
    int status = 0;
    waitpid(pids[r], &status, 0);
    codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return codes;
}

}  // namespace testing_ranks
}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TESTING_TESTING_RANKS_H_
