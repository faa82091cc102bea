// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Runs in the relay after its fork: raw system calls and fixed buffers
// only (async-signal-safe: the task process is a one-thread fork of a
// many-thread slurmstepd), nothing that allocates or locks.
#include "relay/descendants.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/small_file.h"
#include "relay/warning_signals.h"

namespace dist_train {
namespace {

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

}  // namespace

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

}  // namespace dist_train
