// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// dt-run: the native per-node launcher. Starts N workers with the full
// per-worker contract (RANK, WORLD_SIZE, LOCAL_RANK, ...) and each worker's
// binding from the planner, prefixes their output with the rank, forwards
// SIGINT/SIGTERM/SIGUSR1/SIGUSR2 to every worker (warnings not when the
// plugin's relay already delivers them), propagates the first failure's exit
// code, exits 75 when the workers stopped for preemption, and restarts the
// local group up to K times after a failure.

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "binding/binding.h"
#include "binding/binding_env.h"
#include "binding/interfaces.h"
#include "binding/topology.h"
#include "contract/token.h"
#include "dist_train/preemption.h"
#include "launcher/group_exit.h"
#include "launcher/pipe_drain.h"
#include "launcher/worker_env.h"
#include "relay/signal_relay.h"
#include "runtime/runtime_env.h"
#include "runtime/wire.h"

namespace dist_train {
namespace {

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int sig) {
  unsigned char s = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_signal_pipe[1], &s, 1);
  (void)ignored;
}

struct Worker {
  int rank = 0, local = 0;
  pid_t pid = -1;
  int fds[2] = {-1, -1};  // stdout, stderr pipes (read ends)
  std::string pending[2];
  bool running = false;
};

struct Plan {
  NodeModel model;
  BindPlan binding;
  BindingEnvInputs inputs;
  bool bound = false;
};

void Log(const std::string& msg) {
  fprintf(stderr, "dt-run: %s\n", msg.c_str());
}

// The GPUs this launcher drives, as bus-order positions (unset: all of the
// node's), and the CUDA_VISIBLE_DEVICES it was given for them: its own
// GPUs when the plugin planned it as a task with several (DT_GPUS), else
// the step's (SLURM_STEP_GPUS, SLURM_JOB_GPUS).
Status LauncherGpus(const NodeModel& m, BindRequest* req,
                    BindingEnvInputs* in) {
  const char* visible = getenv("CUDA_VISIBLE_DEVICES");
  const char* own = getenv("DT_GPUS");
  if (own != nullptr && *own != '\0') {
    std::vector<int> gpus;
    DT_RETURN_IF_ERROR(GpuPositions(m, own, "DT_GPUS", &gpus));
    req->gpus = gpus;
    if (visible != nullptr) in->slurm_cuda_visible_devices = visible;
    return Status::OK();
  }
  for (const char* var : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    const char* value = getenv(var);
    if (value == nullptr || *value == '\0') continue;
    std::vector<int> gpus;
    DT_RETURN_IF_ERROR(ParseIndexList(value, var, &gpus));
    req->gpus = gpus;
    if (visible != nullptr) in->slurm_cuda_visible_devices = visible;
    break;
  }
  return Status::OK();
}

// One launcher per node (or per task): its nproc workers are the plan's
// ranks, its GPUs divided among them (several each when fewer workers).
Plan PlanBinding(int nproc) {
  Plan p;
  BindRequest req;
  req.ntasks = static_cast<uint32_t>(nproc);
  Status s = LoadNodeModel("", &p.model);
  if (s.ok()) s = LauncherGpus(p.model, &req, &p.inputs);
  if (s.ok()) s = PlanBinding(p.model, req, &p.binding);
  // Without the list the socket-interface variables are just not set.
  if (s.ok()) (void)LiveSocketInterfaces(&p.inputs.socket_interfaces);
  if (!s.ok()) {
    Log("warning: no topology binding: " + s.message());
    return p;
  }
  // On a CPU-only machine (standalone runs, tests) more workers than cores
  // is the usual case, not a mistake worth a line per start.
  if (!p.binding.step_gpus.empty()) {
    for (const std::string& w : p.binding.warnings) Log("warning: " + w);
  }
  p.bound = true;
  return p;
}

// A worker dies with its launcher: each is in its own process group (so
// that a signal to one group reaches one worker), where proctrack/pgid's
// kill of the step (dt-run's group) cannot reach it; a SIGKILLed dt-run
// would leave it running, holding its GPU and ports into the next job.
void DieWithLauncher(pid_t launcher) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(128 + SIGKILL);  // it died before prctl
}

[[noreturn]] void ExecWorker(const NodeContract& node, const Plan& plan,
                             int local, int restart, int out_fd, int err_fd,
                             pid_t launcher, char** argv) {
  setpgid(0, 0);
  DieWithLauncher(launcher);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  for (const auto& [k, v] : WorkerEnv(node, local, restart))
    setenv(k.c_str(), v.c_str(), 1);
  if (plan.bound) {
    const RankPlan& r = plan.binding.ranks[local];
    // The socket interfaces the user chose win (docs/binding.md).
    for (const auto& [k, v] :
         BindingEnv(plan.model, plan.binding, r, plan.inputs))
      setenv(k.c_str(), v.c_str(), !IsSocketInterfaceVar(k));
    Status s = ApplyCpuAffinity(r.cpus);
    if (!s.ok())
      fprintf(stderr, "dt-run: warning: rank %d: %s\n", r.local_rank,
              s.message().c_str());
  }
  // Restore default dispositions and an empty mask for the worker.
  for (int sig : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE})
    signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execvp(argv[0], argv);
  fprintf(stderr, "dt-run: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

bool Spawn(const NodeContract& node, const Plan& plan, int restart, char** argv,
           std::vector<Worker>* ws) {
  ws->assign(node.nproc, Worker());
  for (int i = 0; i < node.nproc; ++i) {
    Worker& w = (*ws)[i];
    w.local = i;
    w.rank = node.node_rank * node.nproc + i;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return false;
    const pid_t launcher = getpid();
    w.pid = fork();
    if (w.pid == 0)
      ExecWorker(node, plan, i, restart, out[1], err[1], launcher, argv);
    setpgid(w.pid, w.pid);
    close(out[1]);
    close(err[1]);
    w.fds[0] = out[0], w.fds[1] = err[0];
    w.running = true;
  }
  return true;
}

void Emit(Worker* w, int stream, const char* data, size_t len, bool flush) {
  std::string& p = w->pending[stream];
  p.append(data, len);
  FILE* f = stream == 0 ? stdout : stderr;
  size_t nl;
  while ((nl = p.find('\n')) != std::string::npos) {
    fprintf(f, "[%d] %s\n", w->rank, p.substr(0, nl).c_str());
    p.erase(0, nl + 1);
  }
  if (flush && !p.empty())
    fprintf(f, "[%d] %s\n", w->rank, p.c_str()), p.clear();
  fflush(f);
}

void Forward(std::vector<Worker>* ws, int sig) {
  for (Worker& w : *ws) {
    if (w.running) kill(-w.pid, sig);
  }
}

int ExitCode(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Signals {
  bool relayed = false;      // the plugin's relay delivers warnings itself
  bool interrupted = false;  // INT or TERM: stop, no restart
  bool warned = false;       // USR1 or USR2 (a preemption warning)
};

// What a worker wrote just before it exited may still be in its pipes when
// it is reaped: read every pipe to the end, all at once, for at most
// kDrainGrace after the last worker exited (a worker's own child may hold a
// pipe open or keep writing). Every stream ends with a newline.
void DrainOutput(std::vector<Worker>* ws) {
  std::vector<int> fds;
  for (Worker& w : *ws) fds.insert(fds.end(), {w.fds[0], w.fds[1]});
  size_t cut =
      DrainToEnd(&fds, std::chrono::steady_clock::now() + kDrainGrace,
                 [ws](size_t i, const char* data, size_t len) {
                   Worker& w = (*ws)[i / 2];
                   Emit(&w, static_cast<int>(i % 2),
                        data != nullptr ? data : "", len, data == nullptr);
                 });
  for (Worker& w : *ws) {
    for (int s = 0; s < 2; ++s) Emit(&w, s, "", 0, true), w.fds[s] = -1;
  }
  if (cut > 0)
    Log(std::to_string(cut) + " output pipe(s) still open " +
        std::to_string(kDrainGrace.count()) +
        " ms after the last worker exited (a worker's child holds them); "
        "not waiting for them");
}

// Runs one group until every worker has exited; collects their exit codes.
GroupOutcome RunGroup(std::vector<Worker>* ws, Signals* sigs) {
  std::vector<int> codes;
  bool stopping = false;
  int running = static_cast<int>(ws->size());
  auto kill_at = std::chrono::steady_clock::time_point::max();
  while (running > 0) {
    std::vector<pollfd> fds = {{g_signal_pipe[0], POLLIN, 0}};
    for (Worker& w : *ws) {
      for (int s = 0; s < 2; ++s) fds.push_back({w.fds[s], POLLIN, 0});
    }
    poll(fds.data(), fds.size(), 100);
    if (fds[0].revents & POLLIN) {
      unsigned char sig;
      while (read(g_signal_pipe[0], &sig, 1) == 1) {
        bool warning = sig == SIGUSR1 || sig == SIGUSR2;
        if (!warning || !sigs->relayed) Forward(ws, sig);
        if (warning && !sigs->warned) {
          Log(std::string("preemption warning (") + strsignal(sig) + ")" +
              (sigs->relayed ? "; the plugin's relay delivers it to workers"
                             : "; forwarded to every worker"));
        }
        sigs->warned |= warning;
        sigs->interrupted |= sig == SIGINT || sig == SIGTERM;
      }
    }
    for (size_t i = 0; i < ws->size(); ++i) {
      for (int s = 0; s < 2; ++s) {
        int fd = (*ws)[i].fds[s];
        if (fd < 0 || !(fds[1 + 2 * i + s].revents & (POLLIN | POLLHUP)))
          continue;
        char buf[65536];
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0) {
          Emit(&(*ws)[i], s, buf, n, false);
        } else if (n == 0) {
          Emit(&(*ws)[i], s, "", 0, true);
          close(fd);
          (*ws)[i].fds[s] = -1;
        }
      }
    }
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (Worker& w : *ws) {
        if (w.pid != pid || !w.running) continue;
        w.running = false;
        --running;
        int code = ExitCode(status);
        codes.push_back(code);
        if (IsFailureCode(code) && !stopping) {
          stopping = true;
          Log("worker rank " + std::to_string(w.rank) + " (pid " +
              std::to_string(pid) + ") failed with exit code " +
              std::to_string(code) + "; stopping the others");
          Forward(ws, SIGTERM);
          kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        }
      }
    }
    if (std::chrono::steady_clock::now() > kill_at)
      Forward(ws, SIGKILL),
          kill_at = std::chrono::steady_clock::time_point::max();
  }
  DrainOutput(ws);
  return SummarizeGroup(codes, sigs->warned);
}

Status Standalone(int nproc, NodeContract* node) {
  int fd = -1, port = 0;
  DT_RETURN_IF_ERROR(Listen(0, &fd, &port, "127.0.0.1"));
  close(fd);
  *node = NodeContract{"127.0.0.1", port, 1, 0, nproc > 0 ? nproc : 1};
  std::string token;
  bool made = false;
  DT_RETURN_IF_ERROR(
      JobToken(TokenRule::kJobStep, getenv(kTokenVar), &token, &made));
  if (made) setenv(kTokenVar, token.c_str(), 1);
  return Status::OK();
}

}  // namespace
}  // namespace dist_train

int main(int argc, char** argv) {
  using namespace dist_train;  // NOLINT: a thin main
  int nproc = 0, max_restarts = 0;
  bool standalone = false;
  std::vector<std::string> command;
  CLI::App app{
      "dt-run: start N workers on this node with the dist-train contract and "
      "binding"};
  app.set_version_flag("--version", DT_VERSION);
  app.footer(
      "Exit status: 0 when every worker succeeded; 75 when they stopped for "
      "preemption (each ended 0 or 75, see dist_train::kPreemptedExitCode); "
      "otherwise the first failed worker's code (128+N: killed by signal N); "
      "1 or 2 for dt-run's own errors.");
  app.add_option("--nproc", nproc,
                 "workers on this node (default: NPROC_PER_NODE, else 1)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--max-restarts", max_restarts,
                 "restart the local group up to K times when a worker fails "
                 "(not after a preemption warning)")
      ->check(CLI::Range(0, 1000));
  app.add_flag(
      "--standalone", standalone,
      "one machine, no Slurm: make up the master address, port and secret");
  app.add_option("command", command, "the worker command (after --)")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  NodeContract node;
  Status s = standalone ? Standalone(nproc, &node)
                        : NodeContractFromEnv(ProcessEnv(), nproc, &node);
  if (!s.ok()) {
    fprintf(stderr, "dt-run: %s\n", s.message().c_str());
    return 1;
  }
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return 1;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2})
    sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  Plan plan = PlanBinding(node.nproc);
  std::vector<char*> args;
  for (std::string& c : command) args.push_back(c.data());
  args.push_back(nullptr);
  for (int restart = 0;; ++restart) {
    std::vector<Worker> workers;
    if (!Spawn(node, plan, restart, args.data(), &workers)) {
      fprintf(stderr, "dt-run: cannot start workers: %s\n", strerror(errno));
      return 1;
    }
    Signals sigs;
    sigs.relayed = UnderSignalRelay();
    GroupOutcome out = RunGroup(&workers, &sigs);
    if (out.preempted) {
      Log("workers stopped for preemption: exit " +
          std::to_string(kPreemptedExitCode));
    }
    if (!out.restartable || sigs.interrupted || restart >= max_restarts)
      return out.exit_code;
    Log("restarting the local group (" + std::to_string(restart + 1) + " of " +
        std::to_string(max_restarts) + ")");
  }
}
