// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The relay's start and its loop. What it runs after the fork (here and in
// descendants.cc, which walks /proc) makes raw system calls only and uses
// fixed buffers: async-signal-safe, nothing that allocates or locks. The
// words it is configured with are in warning_signals.cc and proctrack.cc.
#include "relay/signal_relay.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/parse.h"
#include "base/small_file.h"

namespace dist_train {
namespace {

bool IsSynchronous(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
         sig == SIGTRAP || sig == SIGSYS || sig == SIGABRT;
}

// Every signal the relay waits for: all standard ones but KILL and STOP
// (a genuine fault still reaches a process that blocks it) and the
// real-time ones applications use.
void RelayedSet(sigset_t* set) {
  sigemptyset(set);
  for (int sig = 1; sig < 32; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaddset(set, sig);
  }
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) sigaddset(set, sig);
}

[[noreturn]] void ExitLike(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_DUMPABLE, 0);  // no core, not even through a core pipe
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, nullptr);
    kill(getpid(), sig);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

// Reaps every exited child; true (and *status) once `child` is among them.
// A child that stopped for us as its tracer (it called PTRACE_TRACEME, as
// Slurm does for srun --parallel-debug) is let go, never taken for ended.
bool ReapChildren(pid_t child, int* status) {
  bool done = false;
  int st = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    if (WIFSTOPPED(st)) {
      syscall(SYS_ptrace, PTRACE_DETACH, pid, nullptr, nullptr);
      continue;
    }
    if (pid == child && (WIFEXITED(st) || WIFSIGNALED(st)))
      *status = st, done = true;
  }
  return done;
}

void DetachFromStepd() {
  // slurmstepd's handlers for faults: a genuine fault in the relay is forced
  // through the block and must kill it, not run slurmstepd's code. Never
  // reset default-ignored signals (SIGCHLD, SIGURG, SIGWINCH): SIG_DFL would
  // discard them when pending, and a child that already exited would then
  // never be noticed.
  for (int sig = 1; sig < 32; ++sig) {
    if (!IsSynchronous(sig)) continue;
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
  }
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
  }
  // Everything else: slurmd's log, other tasks' output pipes, ...
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
    for (int fd = 3; fd < 65536; ++fd) close(fd);
  }
}

[[noreturn]] void RunRelay(const RelayConfig& cfg, pid_t child,
                           const sigset_t& relayed) {
  DetachFromStepd();
  int status = 0;
  pid_t self = getpid();
  if (ReapChildren(child, &status)) ExitLike(status);  // gone already
  for (;;) {
    siginfo_t si;
    int sig = sigwaitinfo(&relayed, &si);
    if (sig < 0) continue;  // EINTR
    if (sig == SIGCHLD) {
      if (ReapChildren(child, &status)) ExitLike(status);
      continue;
    }
    // tty signals reach the foreground group by themselves; our own echoes
    // and what the task sends itself (bash's `kill 0`) are not relayed.
    if (si.si_code == SI_KERNEL || si.si_pid == self ||
        (si.si_code <= 0 && si.si_pid > 0 && IsDescendant(si.si_pid)))
      continue;
    if (sig < 64 && (cfg.warning_mask & SignalBit(sig))) {
      ForwardWarning(sig, cfg.proctrack == Proctrack::kPgid);
    } else if (cfg.proctrack == Proctrack::kCgroup) {
      kill(child, sig);
    }
  }
}

}  // namespace

bool UnderSignalRelay() {
  const char* var = getenv(kRelayVar);
  uint64_t relay = 0;
  if (var == nullptr || !ParseUint(var, 2, 1u << 30, &relay)) return false;
  pid_t self = getpid();
  return static_cast<pid_t>(relay) == self ||
         HasAncestor(self, static_cast<pid_t>(relay), 64);
}

// The sanitizers do not follow a stack switch into a clone that shares
// their memory: their builds fork.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DT_RELAY_FORK_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DT_RELAY_FORK_ONLY 1
#endif
#endif
#ifdef DT_RELAY_FORK_ONLY
constexpr bool kCanShareMemory = false;
#else
constexpr bool kCanShareMemory = true;
#endif

namespace {

// ---- the shared-memory start (RelayConfig::child_execs) -------------------
//
// The relay must stay the process Slurm tracks and the task must go on from
// task_init on the original stack, so: the relay moves to a stack of its
// own, clones the task with CLONE_VM|CLONE_VFORK (no page tables copied, no
// copy-on-write faults later) onto a second small stack, from which the
// task jumps back to the original one; the relay sleeps until the task
// execs (or exits) and then relays on its own stack, touching nothing the
// task used.
alignas(64) char g_relay_stack[64 << 10];
alignas(64) char g_task_stack[16 << 10];
ucontext_t g_task_context, g_relay_context;
// Copies, not pointers: the task overwrites the original stack.
struct SharedStart {
  RelayConfig config;
  sigset_t relayed;
  int clone_errno;
} g_shared;

int BackToTask(void*) {
  setcontext(&g_task_context);  // never returns
  return 0;
}

void RelayOnOwnStack() {
  pid_t pid = clone(BackToTask, g_task_stack + sizeof(g_task_stack),
                    CLONE_VM | CLONE_VFORK | SIGCHLD, nullptr);
  if (pid < 0) {
    g_shared.clone_errno = errno;
    return;  // back to the original stack through uc_link, no child
  }
  RunRelay(g_shared.config, pid, g_shared.relayed);
}

// Returns in the task (OK) or, when the clone failed, in the caller with
// the error; the relay never returns.
Status StartSharing(const RelayConfig& config, const sigset_t& relayed,
                    pid_t parent) {
  g_shared = {config, relayed, 0};
  if (getcontext(&g_task_context) != 0)
    return Status::IOError(std::string("getcontext: ") + strerror(errno));
  if (getpid() != parent) return Status::OK();  // the task, on its stack
  if (g_shared.clone_errno != 0)
    return Status::IOError(std::string("clone: ") +
                           strerror(g_shared.clone_errno));
  getcontext(&g_relay_context);
  g_relay_context.uc_stack.ss_sp = g_relay_stack;
  g_relay_context.uc_stack.ss_size = sizeof(g_relay_stack);
  g_relay_context.uc_link = &g_task_context;  // only when clone failed
  makecontext(&g_relay_context, RelayOnOwnStack, 0);
  setcontext(&g_relay_context);
  // Not reached: the task resumes at getcontext above, a failed clone too.
  return Status::IOError("relay start: lost its way");
}

}  // namespace

Status StartSignalRelay(const RelayConfig& config, pid_t* relay) {
  sigset_t relayed, old;
  RelayedSet(&relayed);
  // Children must be waited for (an inherited SIG_IGN or SA_NOCLDWAIT would
  // reap them silently) and orphans must come to the relay. Neither is
  // inherited by the child, which gets the original SIGCHLD action back.
  struct sigaction dfl {
  }, old_chld{};
  dfl.sa_handler = SIG_DFL;
  if (sigaction(SIGCHLD, &dfl, &old_chld) != 0 ||
      sigprocmask(SIG_BLOCK, &relayed, &old) != 0)
    return Status::IOError(std::string("signal setup: ") + strerror(errno));
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t parent = getpid();
  Status started = Status::OK();
  if (config.child_execs && kCanShareMemory) {
    started = StartSharing(config, relayed, parent);
  } else {
    pid_t pid = fork();
    if (pid < 0)
      started = Status::IOError(std::string("fork: ") + strerror(errno));
    if (pid > 0) RunRelay(config, pid, relayed);
  }
  if (!started.ok()) {
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    sigaction(SIGCHLD, &old_chld, nullptr);
    return started;
  }
  // The child: dies with the relay, gets the task's signal setup back.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) kill(getpid(), SIGKILL);
  sigaction(SIGCHLD, &old_chld, nullptr);
  sigprocmask(SIG_SETMASK, &old, nullptr);
  *relay = parent;
  return Status::OK();
}

}  // namespace dist_train
