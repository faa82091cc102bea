// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/watchdog.h"

#include <dirent.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "runtime/checkpoint_files.h"
#include "runtime/hang_report.h"
#include "runtime/progress.h"
#include "runtime/step_timer.h"

namespace dist_train {
namespace {

// What the started watchdog left behind in this process.
struct Started {
  bool running = false;
  int dump_fd = -1;
};
Started g_started;
std::mutex g_start_mutex;

// Set in the watchdog when its worker (the thread that forked it) ended.
volatile sig_atomic_t g_worker_gone = 0;
void OnWorkerGone(int) { g_worker_gone = 1; }

void Nap(double seconds) {
  timespec ts{static_cast<time_t>(seconds),
              static_cast<long>((seconds - static_cast<long>(seconds)) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_worker_gone) {
  }
  g_worker_gone = 0;  // cuts one nap short, not every later one
}

// The native dump: this thread's backtrace (async-signal-safe once
// backtrace() has been called once, which loads libgcc).
void DumpHandler(int) {
  int saved = errno;
  void* frames[64];
  int n = backtrace(frames, 64);
  static const char kHead[] = "native backtrace of the signalled thread:\n";
  if (write(g_started.dump_fd, kHead, sizeof(kHead) - 1) < 0) {
  }
  backtrace_symbols_fd(frames, n, g_started.dump_fd);
  errno = saved;
}

Status InstallDumpHandler() {
  void* warm[2];
  backtrace(warm, 2);
  struct sigaction sa {};
  sa.sa_handler = DumpHandler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(WatchdogDumpSignal(), &sa, nullptr) != 0)
    return Errno("watchdog: sigaction");
  return Status::OK();
}

// /proc/PID/stat's state letter ('?' when unreadable).
char ProcessState(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return '?';
  char buf[512];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return '?';
  buf[n] = '\0';
  const char* paren = strrchr(buf, ')');  // the name may hold blanks
  return paren != nullptr && paren[1] == ' ' && paren[2] ? paren[2] : '?';
}

std::string DumpText(int fd) {
  std::string out;
  char buf[65536];
  off_t off = 0;
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof(buf), off);
    if (n <= 0 || out.size() > (16u << 20)) break;
    out.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return out;
}

struct Watch {
  WatchdogOptions opt;
  std::string step_dir;  // shown in the summary
  int dir_fd = -1;
  pid_t worker = 0;
  ProgressRecord* record = nullptr;
  int dump_fd = -1;
  bool say_history = false;  // the requeue history is ours to say
};

std::string RecordName(int rank) {
  return "rank-" + std::to_string(rank) + ".record";
}

void WriteStacks(const Watch& w, const HangRecord& r) {
  std::string text = "rank " + std::to_string(r.rank) + " on " + r.host +
                     ", pid " + std::to_string(r.pid) + ", state " +
                     std::string(1, r.state) + "\n";
  if (r.state == 'T' || r.state == 't')
    text += "stopped: its dump handler cannot run until it is continued\n";
  text += DumpText(w.dump_fd);
  WriteAtomically(w.dir_fd, w.step_dir,
                  "rank-" + std::to_string(r.rank) + ".stacks", text)
      .ok();
}

// To the job's stderr, whole (one write).
void Say(const std::string& text) {
  if (write(STDERR_FILENO, text.data(), text.size()) < 0) {
  }
}

// Rank 0: every rank's record, until all are there or time is up.
std::vector<HangRecord> Gather(const Watch& w) {
  std::vector<HangRecord> records;
  double deadline = MonotonicSeconds() + w.opt.gather_seconds;
  std::vector<bool> have(static_cast<size_t>(w.opt.world_size));
  for (;;) {
    for (int r = 0; r < w.opt.world_size; ++r) {
      if (have[r]) continue;
      std::string text;
      HangRecord rec;
      if (ReadOwnFile(w.dir_fd, RecordName(r), RecordName(r), 4095, &text)
              .ok() &&
          DecodeHangRecord(text, &rec) && rec.rank == r) {
        have[r] = true;
        records.push_back(rec);
      }
    }
    if (static_cast<int>(records.size()) == w.opt.world_size ||
        MonotonicSeconds() >= deadline)
      return records;
    Nap(0.2);
  }
}

// The others wait for rank 0's summary before ending their worker: a
// worker that ends first could end the step before the summary is out.
void AwaitSummary(const Watch& w) {
  double deadline = MonotonicSeconds() + w.opt.gather_seconds + 10;
  while (MonotonicSeconds() < deadline) {
    struct stat st {};
    if (fstatat(w.dir_fd, "summary.txt", &st, AT_SYMLINK_NOFOLLOW) == 0) return;
    Nap(0.2);
  }
}

[[noreturn]] void OnHang(const Watch& w, const ProgressSnapshot& last,
                         double idle) {
  HangRecord r;
  r.rank = w.opt.rank;
  r.host = w.opt.host;
  r.pid = w.worker;
  r.state = ProcessState(w.worker);
  r.progress = last;
  r.idle_seconds = idle;
  if (r.state != 'T' && r.state != 't') {
    kill(w.worker, WatchdogDumpSignal());
    Nap(w.opt.dump_seconds);
  }
  WriteStacks(w, r);
  WriteAtomically(w.dir_fd, w.step_dir, RecordName(r.rank), EncodeHangRecord(r))
      .ok();
  if (w.opt.rank == 0) {
    std::vector<HangRecord> records = Gather(w);
    std::string summary =
        HangSummary(records, w.opt.world_size, w.opt.seconds, w.step_dir);
    Say(summary);
    // Before the others end their workers (they wait for summary.txt): a
    // job whose step ended may be over before it could be requeued.
    if (w.opt.requeue) {
      RequeueAndSay(ProcessEnv(), w.opt.requeue_ops, HungHosts(records),
                    "dist-train: watchdog: ", [&](const std::string& line) {
                      Say(line + "\n");
                      summary += line + "\n";
                    });
    }
    WriteAtomically(w.dir_fd, w.step_dir, "summary.txt", summary).ok();
    Say("dist-train: watchdog: ending the step (every worker is killed with "
        "SIGKILL)\n");
  } else {
    AwaitSummary(w);
  }
  kill(w.worker, SIGKILL);
  _exit(0);
}

// Closes every descriptor the fork copied but standard I/O and what the
// watchdog uses: a worker's sockets held open here would hide its death
// from its peers, which name a failed rank as soon as its connections close.
void CloseInherited(const Watch& w) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  std::vector<int> fds;
  while (dirent* e = readdir(dir)) {
    int fd = atoi(e->d_name);
    if (fd > 2 && fd != dirfd(dir) && fd != w.dir_fd && fd != w.dump_fd)
      fds.push_back(fd);
  }
  closedir(dir);
  for (int fd : fds) close(fd);
}

// The watchdog process: looks every poll_seconds; exits with its worker.
[[noreturn]] void WatchLoop(const Watch& w) {
  prctl(PR_SET_NAME, "dt-watchdog");  // what ps and pgrep show
  // Told at once when the worker ends (a launcher that waits for every
  // process of the worker's would otherwise wait up to one poll): the
  // signal only cuts a nap short; getppid() decides.
  signal(SIGTERM, OnWorkerGone);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  CloseInherited(w);
  for (int sig : {SIGUSR1, SIGUSR2, SIGURG, SIGHUP, SIGINT, SIGPIPE})
    signal(sig, SIG_IGN);
  ProgressSnapshot last = Snapshot(*w.record);
  double changed = MonotonicSeconds();
  StepTimer timer(w.opt, w.worker, w.record, w.dir_fd, w.step_dir);
  if (w.say_history) {  // on a requeued run
    SayRequeueHistory(ProcessEnv(), w.opt.requeue_ops, "dist-train: watchdog: ",
                      [](const std::string& line) { Say(line + "\n"); });
  }
  for (;;) {
    Nap(w.opt.poll_seconds);
    ProgressSnapshot now = Snapshot(*w.record);
    double t = MonotonicSeconds();
    if (getppid() != w.worker) {
      timer.Publish(now, t - changed, true);
      _exit(0);
    }
    if (now != last) {
      last = now;
      changed = t;
    } else if (t - changed >= w.opt.seconds) {
      OnHang(w, last, t - changed);
    }
    timer.Publish(now, t - changed, false);
    if (w.opt.rank == 0) timer.CheckStragglers();
  }
}

// The step's directory under the base: opened (the base may be a link the
// user chose), the step's own made 0700 and checked to be ours.
Status OpenStepDir(const WatchdogOptions& o, const EnvMap& env, Fd* fd,
                   std::string* path) {
  const std::string* job = EnvFind(env, "SLURM_JOB_ID");
  const std::string* step = EnvFind(env, "SLURM_STEP_ID");
  std::optional<uint64_t> restarts;
  DT_RETURN_IF_ERROR(EnvCount(env, "SLURM_RESTART_COUNT", &restarts));
  std::string name =
      WatchdogStepDirName(job ? *job : "pid" + std::to_string(getpid()),
                          step ? *step : "0", restarts.value_or(0));
  Fd base;
  base.Reset(open(o.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (base.get() < 0) return Errno("watchdog: directory " + o.dir);
  *path = o.dir + "/" + name;
  return MakeOwnDirectory(base.get(), name, *path, fd);
}

Status MapRecord(ProgressRecord** record) {
  void* page = mmap(nullptr, sizeof(ProgressRecord), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return Errno("watchdog: mmap");
  *record = new (page) ProgressRecord();
  return Status::OK();
}

Status Launch(Watch* w) {
  DT_RETURN_IF_ERROR(MapRecord(&w->record));
  w->dump_fd = memfd_create("dt-watchdog-dump", MFD_CLOEXEC);
  if (w->dump_fd < 0) return Errno("watchdog: memfd_create");
  g_started.dump_fd = w->dump_fd;
  DT_RETURN_IF_ERROR(InstallDumpHandler());
  w->worker = getpid();
  w->say_history = w->opt.rank == 0 && w->opt.requeue && ClaimRequeueHistory();
  // What the worker's stdio holds now would be written a second time by
  // the watchdog's copy (its requeue flushes stdio before the step ends).
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return Errno("watchdog: fork");
  if (pid == 0) WatchLoop(*w);
  SetProgressRecord(w->record);
  return Status::OK();
}

}  // namespace

std::string WatchdogStepDirName(const std::string& job, const std::string& step,
                                uint64_t restarts) {
  std::string name = kWatchdogDirPrefix + job + "." + step;
  return restarts > 0 ? name + ".r" + std::to_string(restarts) : name;
}

Status StartWatchdog(const WatchdogOptions& o) {
  std::lock_guard<std::mutex> lock(g_start_mutex);
  if (g_started.running || o.seconds <= 0) return Status::OK();
  Watch w;
  w.opt = o;
  Fd dir;
  DT_RETURN_IF_ERROR(OpenStepDir(o, ProcessEnv(), &dir, &w.step_dir));
  w.dir_fd = dir.Release();
  Status s = Launch(&w);
  if (!s.ok()) return s;
  g_started.running = true;
  return Status::OK();
}

Status StartWatchdogFromEnv(const EnvMap& env, int rank, int world_size) {
  WatchdogOptions o;
  DT_RETURN_IF_ERROR(ReadWatchdogOptions(env, rank, world_size, &o));
  return StartWatchdog(o);
}

Status SaveInWatchdogDir(const EnvMap& env, const std::string& name,
                         const std::string& text) {
  WatchdogOptions o;
  DT_RETURN_IF_ERROR(ReadWatchdogOptions(env, -1, -1, &o));
  if (o.seconds <= 0) return Status::OK();
  Fd dir;
  std::string path;
  DT_RETURN_IF_ERROR(OpenStepDir(o, env, &dir, &path));
  return WriteAtomically(dir.get(), path, name, text);
}

bool WatchdogRunning() {
  std::lock_guard<std::mutex> lock(g_start_mutex);
  return g_started.running;
}

int WatchdogDumpSignal() { return SIGRTMIN + 4; }

int WatchdogDumpFd() {
  std::lock_guard<std::mutex> lock(g_start_mutex);
  return g_started.running ? g_started.dump_fd : -1;
}

}  // namespace dist_train
