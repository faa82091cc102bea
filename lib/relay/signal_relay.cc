// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// One file of ~600 lines on purpose: everything the relay runs after its
// fork (raw syscalls only, async-signal-safe) stays in view together, so a
// reviewer can check in one place that nothing there allocates or locks.
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

namespace dist_train {
namespace {

struct NamedSignal {
  const char* name;
  int sig;
};

// Signals that may serve as a warning: none that stop, continue, end or
// interrupt a step (those keep Slurm's meaning), none the kernel raises.
constexpr NamedSignal kWarningSignals[] = {
    {"HUP", SIGHUP},     {"QUIT", SIGQUIT},     {"USR1", SIGUSR1},
    {"USR2", SIGUSR2},   {"ALRM", SIGALRM},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},   {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH}, {"PWR", SIGPWR}};

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

// ---- async-signal-safe helpers (used after the fork) -------------------

// A path built in a fixed buffer: "/proc/" + number + ...
struct Path {
  char buf[96];
  size_t len = 0;
  Path& Add(const char* s) {
    while (*s && len + 1 < sizeof(buf)) buf[len++] = *s++;
    buf[len] = 0;
    return *this;
  }
  Path& Add(long n) {
    char digits[24];
    int k = 0;
    do digits[k++] = static_cast<char>('0' + n % 10), n /= 10;
    while (n > 0 && k < 24);
    while (k > 0 && len + 1 < sizeof(buf)) buf[len++] = digits[--k];
    buf[len] = 0;
    return *this;
  }
};

// Reads up to cap-1 bytes of a small file; -1 if it cannot be opened.
ssize_t ReadSmallFile(const char* path, char* buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  while (len + 1 < cap) {
    ssize_t n = read(fd, buf + len, cap - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  close(fd);
  buf[len] = 0;
  return static_cast<ssize_t>(len);
}

// Descendants found by walking /proc/PID/task/TID/children.
constexpr int kMaxDescendants = 16384;
pid_t g_found[kMaxDescendants];
int g_nfound = 0;

void AddPid(pid_t pid) {
  if (g_nfound < kMaxDescendants) g_found[g_nfound++] = pid;
}

// Appends the pids listed in one children file (space separated).
void AddChildrenFile(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  long pid = 0;
  bool in_number = false;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        pid = pid * 10 + (buf[i] - '0'), in_number = true;
      } else if (in_number) {
        AddPid(static_cast<pid_t>(pid)), pid = 0, in_number = false;
      }
    }
  }
  if (in_number) AddPid(static_cast<pid_t>(pid));
  close(fd);
}

struct LinuxDirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// Children of every thread of `pid` (a child belongs to the thread that
// forked it).
void AddChildren(pid_t pid) {
  Path dir;
  dir.Add("/proc/").Add(pid).Add("/task");
  int fd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[4096];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
      off += d->d_reclen;
      if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
      Path children = dir;
      children.Add("/").Add(d->d_name).Add("/children");
      AddChildrenFile(children.buf);
    }
  }
  close(fd);
}

// /proc/PID/status; large, since a long Groups: line comes before Sig*.
char g_status[65536];

// Pids already looked at for the warning being relayed.
pid_t g_seen[kMaxDescendants];
int g_nseen = 0;

bool Seen(pid_t pid) {
  for (int i = 0; i < g_nseen; ++i) {
    if (g_seen[i] == pid) return true;
  }
  return false;
}

// Sends `sig` to `pid` if it wants it (and, under pgid, is not in our
// process group). Through a pidfd taken before the check, so a pid reused
// meanwhile is never signalled.
void OfferWarning(pid_t pid, int sig, bool skip_own_group, pid_t group) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return;  // gone
  Path path;
  path.Add("/proc/").Add(pid).Add("/status");
  ssize_t len = ReadSmallFile(path.buf, g_status, sizeof(g_status));
  SignalMasks masks;
  if (len > 0 && ParseStatusMasks(g_status, static_cast<size_t>(len), &masks) &&
      WantsSignal(masks, sig) && !(skip_own_group && getpgid(pid) == group)) {
    syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0);
  }
  close(pidfd);
}

// The kernel lists children by position when the previous one it listed
// has exited, and then skips one: a worker that exits while we walk (under
// pgid, killpg reached it at the same moment) can hide its younger
// sibling. So the walk is repeated until it finds nobody new.
constexpr int kMaxWalks = 8;

// Sends `sig` to every descendant of this process that wants it, once;
// under pgid skips those in our process group (Slurm's killpg reached
// them).
void ForwardWarning(int sig, bool skip_own_group) {
  pid_t group = getpgrp();
  g_nseen = 0;
  for (int walk = 0; walk < kMaxWalks; ++walk) {
    g_nfound = 0;
    AddChildren(getpid());
    for (int i = 0; i < g_nfound; ++i) AddChildren(g_found[i]);
    int fresh = 0;
    for (int i = 0; i < g_nfound; ++i) {
      pid_t pid = g_found[i];
      if (Seen(pid) || g_nseen == kMaxDescendants) continue;
      g_seen[g_nseen++] = pid;
      ++fresh;
      OfferWarning(pid, sig, skip_own_group, group);
    }
    if (fresh == 0) return;
  }
}

// The parent of `pid` from /proc/PID/stat, -1 when unknown.
// Async-signal-safe.
pid_t ParentOf(pid_t pid) {
  char stat[512];
  Path path;
  path.Add("/proc/").Add(pid).Add("/stat");
  ssize_t len = ReadSmallFile(path.buf, stat, sizeof(stat));
  if (len <= 0) return -1;
  const char* p = stat + len;
  while (p > stat && *p != ')') --p;  // comm may hold spaces and parens
  if (*p != ')') return -1;
  p += 2;                       // ") " then the state letter
  while (*p && *p != ' ') ++p;  // skip the state
  if (*p != ' ' || p[1] < '0' || p[1] > '9') return -1;
  long ppid = 0;
  for (++p; *p >= '0' && *p <= '9'; ++p) ppid = ppid * 10 + (*p - '0');
  return static_cast<pid_t>(ppid);
}

// Whether `ancestor` is among the first `max_depth` ancestors of `pid`.
bool HasAncestor(pid_t pid, pid_t ancestor, int max_depth) {
  for (int depth = 0; pid > 1 && depth < max_depth; ++depth) {
    pid = ParentOf(pid);
    if (pid == ancestor) return true;
  }
  return false;
}

// Whether `pid` is one of our descendants (then a signal it sent us is
// the task's own business, e.g. bash's `kill 0`, and is not relayed).
bool IsDescendant(pid_t pid) { return HasAncestor(pid, getpid(), 256); }

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

Status ParseWarningSignals(std::string_view text, const std::string& what,
                           uint64_t* mask) {
  const std::string prefix = what.empty() ? "" : what + ": ";
  uint64_t out = 0;
  for (std::string_view word : Split(text, ',')) {
    std::string_view name = word;
    if (name.substr(0, 3) == "SIG") name.remove_prefix(3);
    int found = 0;
    for (const NamedSignal& s : kWarningSignals) {
      if (name == s.name) found = s.sig;
    }
    if (found == 0) {
      return Status::InvalidArgument(
          prefix + "'" + std::string(word) +
          "' cannot be a warning signal; use one or more of HUP, QUIT, USR1, "
          "USR2, ALRM, URG, XCPU, VTALRM, PROF, WINCH, PWR");
    }
    if (out & SignalBit(found)) {
      return Status::InvalidArgument(prefix + "'" + std::string(word) +
                                     "' given twice");
    }
    out |= SignalBit(found);
  }
  if (out == 0) return Status::InvalidArgument(prefix + "no signal given");
  *mask = out;
  return Status::OK();
}

std::string FormatWarningSignals(uint64_t mask) {
  std::string out;
  for (const NamedSignal& s : kWarningSignals) {
    if (mask & SignalBit(s.sig))
      out += (out.empty() ? "" : ",") + std::string(s.name);
  }
  return out;
}

bool ParseProctrack(std::string_view text, Proctrack* out) {
  struct {
    const char* name;
    Proctrack p;
  } const kNames[] = {{"auto", Proctrack::kAuto},
                      {"cgroup", Proctrack::kCgroup},
                      {"pgid", Proctrack::kPgid},
                      {"linuxproc", Proctrack::kLinuxproc}};
  for (const auto& n : kNames) {
    if (text == n.name) return *out = n.p, true;
  }
  return false;
}

const char* ProctrackName(Proctrack p) {
  switch (p) {
    case Proctrack::kAuto:
      return "auto";
    case Proctrack::kCgroup:
      return "cgroup";
    case Proctrack::kPgid:
      return "pgid";
    case Proctrack::kLinuxproc:
      return "linuxproc";
  }
  return "?";
}

Proctrack DetectProctrack(std::string_view cgroups) {
  for (std::string_view line : Split(cgroups, '\n')) {
    // "ID:CONTROLLERS:PATH"; v1 freezer is what proctrack/cgroup uses.
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string_view::npos || b == std::string_view::npos) continue;
    std::string_view controllers = line.substr(a + 1, b - a - 1);
    std::string_view path = line.substr(b + 1);
    bool step = path.find("/job_") != std::string_view::npos &&
                path.find("/step_") != std::string_view::npos;
    bool freezer = controllers.find("freezer") != std::string_view::npos;
    if (step && (freezer || controllers.empty())) return Proctrack::kCgroup;
  }
  return Proctrack::kPgid;
}

// With read(2), not an ifstream: it runs in every task process, where the
// first stream builds libstdc++'s whole classic locale (~30 facets, each a
// copy-on-write fault in a process forked from slurmstepd; perf of 16 x 4
// steps).
Proctrack ResolveProctrack(Proctrack configured) {
  return ResolveProctrack(configured, "/proc/self/cgroup");
}

namespace {

// A cgroup file too long for ResolveProctrack's first buffer, whole (its
// own frame, so that the usual case does not reach 64 KiB down the stack).
[[gnu::noinline]] Proctrack DetectFromLongFile(const char* cgroup_file) {
  char text[64 << 10];
  ssize_t len = ReadSmallFile(cgroup_file, text, sizeof(text));
  return DetectProctrack(
      std::string_view(text, len < 0 ? 0 : static_cast<size_t>(len)));
}

}  // namespace

Proctrack ResolveProctrack(Proctrack configured, const char* cgroup_file) {
  if (configured != Proctrack::kAuto) return configured;
  // One line per hierarchy: a few hundred bytes. A small buffer stays in
  // stack pages the task already used (a new one is a copy-on-write fault,
  // perf of 4 x 4 steps); a file that fills it is read again whole.
  char text[4 << 10];
  ssize_t len = ReadSmallFile(cgroup_file, text, sizeof(text));
  if (len >= 0 && static_cast<size_t>(len) + 1 >= sizeof(text))
    return DetectFromLongFile(cgroup_file);
  return DetectProctrack(
      std::string_view(text, len < 0 ? 0 : static_cast<size_t>(len)));
}

uint64_t WithJobWarningSignal(uint64_t admin_mask,
                              const std::string* preempt_signal) {
  uint64_t job = 0;
  if (preempt_signal != nullptr &&
      ParseWarningSignals(*preempt_signal, "", &job).ok()) {
    admin_mask |= job;
  }
  return admin_mask;
}

bool ParseStatusMasks(const char* text, size_t len, SignalMasks* out) {
  struct Field {
    const char* key;
    uint64_t* value;
  } fields[] = {{"SigBlk:", &out->blocked},
                {"SigIgn:", &out->ignored},
                {"SigCgt:", &out->caught}};
  int seen = 0;
  for (size_t i = 0; i < len;) {
    size_t end = i;
    while (end < len && text[end] != '\n') ++end;
    if (end == len) break;  // a line cut off by the read is not trusted
    for (Field& f : fields) {
      size_t k = strlen(f.key);
      if (end - i <= k || memcmp(text + i, f.key, k) != 0) continue;
      uint64_t v = 0;
      size_t j = i + k, digits = 0;
      while (j < end && (text[j] == '\t' || text[j] == ' ')) ++j;
      for (; j < end; ++j, ++digits) {
        char c = text[j];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                       : -1;
        if (d < 0) return false;
        v = v << 4 | static_cast<uint64_t>(d);
      }
      if (digits != 16) return false;
      *f.value = v;
      ++seen;
    }
    i = end + 1;
  }
  return seen == 3;
}

bool WantsSignal(const SignalMasks& m, int sig) {
  uint64_t bit = SignalBit(sig);
  if (m.caught & bit) return true;
  // Blocked and not ignored: a sigwait/signalfd user, unless it blocks
  // (nearly) every standard signal for a moment, as glibc's posix_spawn and
  // CPython's subprocess do around fork: the warning would kill it later.
  int blocked_standard = __builtin_popcountll(m.blocked & 0x7fffffffULL);
  return (m.blocked & bit) && !(m.ignored & bit) && blocked_standard < 28;
}

bool CanListChildren() {
  Path p;
  p.Add("/proc/self/task/")
      .Add(static_cast<long>(syscall(SYS_gettid)))
      .Add("/children");
  return access(p.buf, R_OK) == 0;
}

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
