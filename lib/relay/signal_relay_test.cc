// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay/signal_relay.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

#include "testing/testing_files.h"

namespace dist_train {
namespace {

TEST(SignalRelayTest, UnderSignalRelayOnlyForAnAncestorOrItself) {
  setenv(kRelayVar, std::to_string(getppid()).c_str(), 1);
  EXPECT_TRUE(UnderSignalRelay());
  // linuxproc: the task process itself (Slurm delivers to all of it)
  setenv(kRelayVar, std::to_string(getpid()).c_str(), 1);
  EXPECT_TRUE(UnderSignalRelay());
  pid_t child = fork();  // below us, not above
  if (child == 0) {
    pause();
    _exit(0);
  }
  setenv(kRelayVar, std::to_string(child).c_str(), 1);
  EXPECT_FALSE(UnderSignalRelay());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  setenv(kRelayVar, "1x", 1);
  EXPECT_FALSE(UnderSignalRelay());
  unsetenv(kRelayVar);
  EXPECT_FALSE(UnderSignalRelay());
}

// ---- the relay, with real processes --------------------------------------
//
// The test process forks P, which plays Slurm's task process: it starts the
// relay; its child L plays the launcher and starts workers the way launchers
// do (same group, setsid, double-forked setsid). Workers report through a
// pipe: 'R' when their handler is in place, their letter per warning.

int g_report = -1;
volatile sig_atomic_t g_warned = 0;
char g_letter = '?';

void OnWarning(int) {
  ssize_t ignored = write(g_report, &g_letter, 1);
  (void)ignored;
  g_warned = 1;
}

void Catch(int sig, char letter) {
  g_letter = letter;
  struct sigaction sa {};
  sa.sa_handler = OnWarning;
  sigaction(sig, &sa, nullptr);
}

// Catches USR1, says ready, and after its first warning lingers 300 ms (a
// duplicate would be reported) before exiting 0.
[[noreturn]] void Worker(char letter) {
  Catch(SIGUSR1, letter);
  ssize_t ignored = write(g_report, "R", 1);
  (void)ignored;
  for (int i = 0; i < 500 && !g_warned; ++i) usleep(10000);
  usleep(300000);
  _exit(0);
}

pid_t StartWorker(char letter, bool new_session, bool orphan) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  // Not L's handler: until Worker() catches, this process (and the middle
  // one of a double fork) does not want the warning, as a real launcher's
  // child after exec.
  signal(SIGUSR1, SIG_DFL);
  if (new_session) setsid();
  if (orphan && fork() != 0) _exit(0);  // the middle process exits at once
  Worker(letter);
}

// What L does with its workers: start them, wait for its own children, exit.
struct Scenario {
  Proctrack proctrack = Proctrack::kCgroup;
  bool launcher_catches_usr1 = false;
  bool launcher_catches_term = false;
  int workers = 3;  // a: same group, b: setsid, c: double-forked setsid
  int exit_code = 7;
};

[[noreturn]] void Launcher(const Scenario& sc) {
  sigset_t mask;
  sigprocmask(SIG_SETMASK, nullptr, &mask);
  if (sigismember(&mask, SIGUSR1) || sigismember(&mask, SIGTERM)) {
    ssize_t ignored = write(g_report, "M", 1);  // mask not restored
    (void)ignored;
  }
  if (sc.launcher_catches_usr1) Catch(SIGUSR1, 'L');
  if (sc.launcher_catches_term) Catch(SIGTERM, 'T');
  pid_t kids[2] = {-1, -1};
  if (sc.workers >= 1) kids[0] = StartWorker('a', false, false);
  if (sc.workers >= 2) kids[1] = StartWorker('b', true, false);
  if (sc.workers >= 3) waitpid(StartWorker('c', true, true), nullptr, 0);
  for (pid_t k : kids) {
    while (k > 0 && waitpid(k, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (sc.workers == 0) {
    ssize_t ignored = write(g_report, "R", 1);
    (void)ignored;
    for (int i = 0; i < 100 && !g_warned; ++i) usleep(10000);
  }
  _exit(sc.exit_code);
}

// Forks P (own process group), which starts the relay with L as its child.
pid_t StartTask(const Scenario& sc, int report_fd) {
  pid_t p = fork();
  if (p != 0) return p;
  setpgid(0, 0);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  g_report = report_fd;
  int extra[2];
  if (pipe(extra) != 0) _exit(90);  // fds the relay must close
  RelayConfig cfg;
  cfg.proctrack = sc.proctrack;
  cfg.warning_mask = SignalBit(SIGUSR1) | SignalBit(SIGUSR2);
  pid_t relay = 0;
  if (!StartSignalRelay(cfg, &relay).ok()) _exit(91);
  if (relay == getpid()) _exit(92);  // only the child gets here
  setenv(kRelayVar, std::to_string(relay).c_str(), 1);
  if (!UnderSignalRelay()) _exit(94);
  Launcher(sc);
}

// Bytes from the report pipe: waits until `n` arrived or `ms` passed.
std::string Read(int fd, size_t n, int ms) {
  std::string got;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (got.size() < n) {
    int left =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                             end - std::chrono::steady_clock::now())
                             .count());
    if (left <= 0) break;
    pollfd pfd = {fd, POLLIN, 0};
    if (poll(&pfd, 1, left) <= 0) continue;
    char c;
    if (read(fd, &c, 1) == 1) got += c;
  }
  return got;
}

std::string Sorted(std::string s) {
  std::sort(s.begin(), s.end());
  return s;
}

int WaitStatus(pid_t p) {
  int status = 0;
  EXPECT_EQ(waitpid(p, &status, 0), p);
  return status;
}

int OpenFds(pid_t pid) {
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// Waits up to 5 s for `p`; false (and kills it) when it is still there.
bool EndsWithin5s(pid_t p, int* status) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  pid_t got = 0;
  while ((got = waitpid(p, status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < until) {
    usleep(1000);
  }
  if (got == p) return true;
  kill(p, SIGKILL);
  waitpid(p, status, 0);
  return false;
}

class RelayProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CanListChildren()) GTEST_SKIP() << "no /proc/PID/task/TID/children";
    ASSERT_EQ(pipe(report_), 0);
  }
  void TearDown() override {
    close(report_[0]);
    close(report_[1]);
  }
  int report_[2] = {-1, -1};
};

TEST_F(RelayProcessTest, CgroupWarningReachesEveryCatchingWorkerOnce) {
  Scenario sc;  // launcher does not catch USR1 (like torchrun)
  pid_t p = StartTask(sc, report_[1]);
  ASSERT_EQ(Read(report_[0], 3, 5000), "RRR");
  EXPECT_EQ(OpenFds(p), 3);  // /dev/null x3: nothing inherited
  kill(p, SIGUSR1);          // proctrack/cgroup: Slurm signals the task only
  EXPECT_EQ(Sorted(Read(report_[0], 4, 1000)), "abc");  // no 4th byte
  int status = WaitStatus(p);
  ASSERT_TRUE(WIFEXITED(status)) << "the launcher died of the warning";
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST_F(RelayProcessTest, CgroupOtherSignalsGoToTheChildOnly) {
  Scenario sc;
  sc.launcher_catches_term = true;
  sc.workers = 0;
  pid_t p = StartTask(sc, report_[1]);
  ASSERT_EQ(Read(report_[0], 1, 5000), "R");
  kill(p, SIGTERM);
  EXPECT_EQ(Read(report_[0], 2, 500), "T");
  EXPECT_EQ(WEXITSTATUS(WaitStatus(p)), 7);
}

TEST_F(RelayProcessTest, PgidRelaysOnlyToOtherGroups) {
  Scenario sc;
  sc.proctrack = Proctrack::kPgid;
  sc.launcher_catches_usr1 = true;
  pid_t p = StartTask(sc, report_[1]);
  ASSERT_EQ(Read(report_[0], 3, 5000), "RRR");
  killpg(p, SIGUSR1);  // proctrack/pgid: Slurm signals task 0's group
  // L and a got it from killpg, b and c from the relay; nobody twice.
  EXPECT_EQ(Sorted(Read(report_[0], 5, 1000)), "Labc");
  EXPECT_EQ(WEXITSTATUS(WaitStatus(p)), 7);
}

TEST_F(RelayProcessTest, PgidLeavesOtherSignalsToKillpg) {
  Scenario sc;
  sc.proctrack = Proctrack::kPgid;
  sc.launcher_catches_term = true;
  sc.workers = 0;
  pid_t p = StartTask(sc, report_[1]);
  ASSERT_EQ(Read(report_[0], 1, 5000), "R");
  kill(p, SIGTERM);
  EXPECT_EQ(Read(report_[0], 1, 300), "");
  killpg(p, SIGTERM);
  EXPECT_EQ(Read(report_[0], 2, 500), "T");
  EXPECT_EQ(WEXITSTATUS(WaitStatus(p)), 7);
}

TEST_F(RelayProcessTest, ExitsLikeTheChild) {
  for (int sig : {SIGSEGV, SIGKILL, SIGTERM}) {
    pid_t p = fork();
    if (p == 0) {
      struct rlimit no_core = {0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      RelayConfig cfg;
      cfg.warning_mask = SignalBit(SIGUSR1);
      pid_t relay = 0;
      if (!StartSignalRelay(cfg, &relay).ok()) _exit(91);
      signal(sig, SIG_DFL);
      kill(getpid(), sig);
      _exit(93);
    }
    int status = WaitStatus(p);
    ASSERT_TRUE(WIFSIGNALED(status)) << sig;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_FALSE(WCOREDUMP(status));
  }
  Scenario sc;
  sc.workers = 0;
  sc.exit_code = 0;
  pid_t p = StartTask(sc, report_[1]);
  EXPECT_EQ(Read(report_[0], 1, 5000), "R");
  int status = WaitStatus(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A child that is gone before the relay is set up must still end it (its
// SIGCHLD must not be lost, e.g. by resetting the disposition).
TEST_F(RelayProcessTest, ChildThatExitsAtOnce) {
  for (int i = 0; i < 200; ++i) {
    pid_t p = fork();
    if (p == 0) {
      RelayConfig cfg;
      cfg.warning_mask = SignalBit(SIGUSR1);
      pid_t relay = 0;
      if (!StartSignalRelay(cfg, &relay).ok()) _exit(91);
      _exit(i % 7);
    }
    int status = 0;
    if (!EndsWithin5s(p, &status))
      FAIL() << "iteration " << i << ": the relay outlived its child";
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), i % 7);
  }
}

// P with the relay started as the plugin starts it (child_execs: the child
// shares P's memory until it execs) and the child exec'ing `path` with
// `script` (sh -c), the report pipe as its fd 3.
pid_t StartExecing(int report_fd, const char* path, const char* script) {
  pid_t p = fork();
  if (p != 0) return p;
  setpgid(0, 0);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  RelayConfig cfg;
  cfg.proctrack = Proctrack::kCgroup;
  cfg.warning_mask = SignalBit(SIGUSR1);
  cfg.child_execs = true;
  pid_t relay = 0;
  if (!StartSignalRelay(cfg, &relay).ok()) _exit(91);
  if (relay != getppid() || relay == getpid()) _exit(92);
  dup2(report_fd, 3);
  execl(path, "sh", "-c", script, static_cast<char*>(nullptr));
  _exit(126);  // exits instead of exec'ing: the relay must end too
}

TEST_F(RelayProcessTest, SharedStartEndsLikeTheExecedProgram) {
  struct Case {
    const char* path;
    const char* script;
    bool signaled;
    int code;  // exit code or signal
  } cases[] = {
      {"/bin/sh", "exit 5", false, 5},
      {"/bin/sh", "kill -TERM $$", true, SIGTERM},
      {"/bin/sh", "exit 0", false, 0},
      {"/nonexistent/sh", "", false, 126},
  };
  for (const Case& c : cases) {
    for (int i = 0; i < 20; ++i) {
      pid_t p = StartExecing(report_[1], c.path, c.script);
      int status = 0;
      ASSERT_TRUE(EndsWithin5s(p, &status)) << c.script << " outlived";
      if (c.signaled) {
        ASSERT_TRUE(WIFSIGNALED(status)) << c.script;
        EXPECT_EQ(WTERMSIG(status), c.code);
        EXPECT_FALSE(WCOREDUMP(status));
      } else {
        ASSERT_TRUE(WIFEXITED(status)) << c.script << " " << status;
        EXPECT_EQ(WEXITSTATUS(status), c.code) << c.script;
      }
    }
  }
}

TEST_F(RelayProcessTest, SharedStartRelaysWarningsToTheProgramsWorkers) {
  // The launcher would die of USR1 (default action); its worker, in a
  // session of its own (as torchrun starts them), catches it.
  pid_t p = StartExecing(report_[1], "/bin/sh",
                         "setsid sh -c 'trap \"printf a >&3; exit 0\" USR1; "
                         "printf R >&3; while :; do sleep 0.02; done' & wait");
  ASSERT_EQ(Read(report_[0], 1, 5000), "R");
  EXPECT_EQ(OpenFds(p), 3);  // /dev/null x3: nothing inherited
  kill(p, SIGUSR1);
  EXPECT_EQ(Read(report_[0], 2, 2000), "a");  // once
  int status = 0;
  ASSERT_TRUE(EndsWithin5s(p, &status));
  ASSERT_TRUE(WIFEXITED(status)) << "the launcher died of the warning";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// P with the relay started by `setup` (in P) and `body` run in the child.
pid_t StartRelayed(int report_fd, const std::function<void()>& body,
                   const std::function<void()>& setup = nullptr) {
  pid_t p = fork();
  if (p != 0) return p;
  setpgid(0, 0);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  g_report = report_fd;
  if (setup) setup();
  RelayConfig cfg;
  cfg.proctrack = Proctrack::kCgroup;
  cfg.warning_mask = SignalBit(SIGUSR1);
  pid_t relay = 0;
  if (!StartSignalRelay(cfg, &relay).ok()) _exit(91);
  body();
  _exit(7);
}

void Say(const char* what) {
  ssize_t ignored = write(g_report, what, strlen(what));
  (void)ignored;
}

TEST_F(RelayProcessTest, WhatTheTaskSendsItselfIsNotRelayed) {
  pid_t p = StartRelayed(report_[1], [] {
    Catch(SIGTERM, 'T');
    pid_t worker = StartWorker('a', true, false);  // catches USR1
    usleep(200000);
    kill(0, SIGTERM);          // bash's `kill 0`: reaches the relay too
    kill(getppid(), SIGUSR1);  // e.g. a readiness note to the parent
    usleep(500000);
    kill(worker, SIGKILL);
    waitpid(worker, nullptr, 0);
    Say("E");
  });
  // T once (directly, not again through the relay); no warning for 'a'
  EXPECT_EQ(Read(report_[0], 3, 3000), "RTE");
  EXPECT_EQ(Read(report_[0], 1, 200), "");
  EXPECT_EQ(WEXITSTATUS(WaitStatus(p)), 7);
}

TEST_F(RelayProcessTest, FaultAndRealtimeSignalsGoToTheChild) {
  pid_t p = StartRelayed(report_[1], [] {
    Catch(SIGABRT, 'A');
    g_letter = 'A';
    struct sigaction sa {};
    sa.sa_handler = [](int) {
      Say("Q");
      g_warned = 2;
    };
    sigaction(SIGRTMIN + 4, &sa, nullptr);
    Say("R");
    for (int i = 0; i < 300 && g_warned != 2; ++i) usleep(10000);
  });
  ASSERT_EQ(Read(report_[0], 1, 3000), "R");
  kill(p, SIGABRT);  // scancel -s ABRT, for a core or a traceback
  EXPECT_EQ(Read(report_[0], 1, 1000), "A");
  kill(p, SIGRTMIN + 4);
  EXPECT_EQ(Read(report_[0], 1, 1000), "Q");
  int status = WaitStatus(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7);
}

TEST_F(RelayProcessTest, AnInheritedIgnoredSigchldDoesNotHangIt) {
  pid_t p = StartRelayed(
      report_[1],
      [] {
        struct sigaction old {};
        sigaction(SIGCHLD, nullptr, &old);
        Say(old.sa_handler == SIG_IGN ? "I" : "?");  // given back to the task
        _exit(5);
      },
      [] { signal(SIGCHLD, SIG_IGN); });
  EXPECT_EQ(Read(report_[0], 1, 3000), "I");
  int status = 0;
  ASSERT_TRUE(EndsWithin5s(p, &status)) << "the relay hung";
  EXPECT_EQ(WEXITSTATUS(status), 5);
}

TEST_F(RelayProcessTest, AChildThatAsksToBeTracedIsLetGo) {
  // Slurm does PTRACE_TRACEME in the task for srun --parallel-debug; the
  // relay is then the tracer and sees a stop at exec, not an end.
  pid_t p = StartRelayed(report_[1], [] {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execl("/bin/sh", "sh", "-c", "exit 4", static_cast<char*>(nullptr));
    _exit(90);
  });
  int status = 0;
  ASSERT_TRUE(EndsWithin5s(p, &status)) << "the relay hung";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 4) << status;
}

TEST_F(RelayProcessTest, ChildDiesWithTheRelay) {
  Scenario sc;
  sc.workers = 0;
  pid_t p = StartTask(sc, report_[1]);
  ASSERT_EQ(Read(report_[0], 1, 5000), "R");
  std::string children =
      "/proc/" + std::to_string(p) + "/task/" + std::to_string(p) + "/children";
  FILE* f = fopen(children.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int child = 0;
  ASSERT_EQ(fscanf(f, "%d", &child), 1);
  fclose(f);
  kill(p, SIGKILL);  // e.g. Slurm's SIGKILL reaching the relay first
  WaitStatus(p);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::string stat = "/proc/" + std::to_string(child) + "/stat";
    FILE* sf = fopen(stat.c_str(), "r");
    char state = 'Z';  // gone or a zombie waiting for init
    if (sf != nullptr) {
      if (fscanf(sf, "%*d %*s %c", &state) != 1) state = 'Z';
      fclose(sf);
    }
    gone = state == 'Z';
    if (!gone) usleep(10000);
  }
  EXPECT_TRUE(gone) << "launcher " << child << " outlived its relay";
}

}  // namespace
}  // namespace dist_train
