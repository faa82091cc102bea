// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/task_preflight.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "base/clock.h"
#include "base/slurm_ids.h"

namespace dist_train {
namespace {

constexpr double kReportGrace = 15;

std::vector<char*> Pointers(std::vector<std::string>& texts) {
  std::vector<char*> out;
  for (std::string& t : texts) out.push_back(t.data());
  out.push_back(nullptr);
  return out;
}

Status Spawn(const PreflightCommand& cmd, pid_t* pid) {
  std::vector<std::string> argv = {cmd.program};
  argv.insert(argv.end(), cmd.args.begin(), cmd.args.end());
  std::vector<std::string> envp = cmd.env;
  std::vector<char*> a = Pointers(argv), e = Pointers(envp);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  int rc =
      posix_spawn(pid, cmd.program.c_str(), nullptr, &attr, a.data(), e.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::Unavailable("preflight: cannot run " + cmd.program + ": " +
                               strerror(rc));
  }
  return Status::OK();
}

}  // namespace

PreflightCommand PreflightCommandFor(const std::string& program,
                                     const PreflightSetting& setting,
                                     const PreflightTask& task,
                                     std::vector<std::string> env) {
  PreflightCommand cmd;
  cmd.program = program;
  cmd.args = {"--seconds",
              std::to_string(setting.seconds),
              "--policy",
              PreflightPolicyName(setting.policy),
              "--rank",
              std::to_string(task.rank),
              "--size",
              std::to_string(task.size),
              "--probe",
              task.probes ? "1" : "0",
              "--identity",
              "slurm:" + std::to_string(task.job_id) + "." +
                  std::to_string(task.step_id) + ":preflight"};
  const PreflightBaseline& b = setting.baseline;
  if (b.cpu_gflops > 0)
    cmd.args.insert(cmd.args.end(),
                    {"--min-cpu-gflops", PreflightRateName(b.cpu_gflops)});
  if (b.mem_gbps > 0)
    cmd.args.insert(cmd.args.end(),
                    {"--min-mem-gbps", PreflightRateName(b.mem_gbps)});
  if (b.link_mbps > 0)
    cmd.args.insert(cmd.args.end(),
                    {"--min-link-mbps", std::to_string(b.link_mbps)});
  cmd.env = std::move(env);
  cmd.deadline_seconds = setting.seconds + kReportGrace;
  return cmd;
}

Status RunPreflightCommand(const PreflightCommand& cmd, int* exit_code) {
  *exit_code = -1;
  pid_t pid = -1;
  DT_RETURN_IF_ERROR(Spawn(cmd, &pid));
  double deadline = MonotonicSeconds() + cmd.deadline_seconds;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      return Status::Unavailable(std::string("preflight: waitpid: ") +
                                 strerror(errno));
    }
    if (MonotonicSeconds() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return Status::Timeout(
          "preflight: " + cmd.program + " did not finish in " +
          std::to_string(static_cast<int>(cmd.deadline_seconds)) +
          " s and was killed");
    }
    timespec nap{0, 10 * 1000 * 1000};
    nanosleep(&nap, nullptr);
  }
  if (WIFEXITED(status)) *exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    return Status::Unavailable("preflight: " + cmd.program + " died of " +
                               strsignal(WTERMSIG(status)));
  }
  return Status::OK();
}

Status PreflightOutcome(const PreflightSetting& setting, const Status& ran,
                        int exit_code, std::string* warning) {
  warning->clear();
  if (ran.ok() && exit_code == kPreflightPassed) return Status::OK();
  bool fail = setting.policy != PreflightPolicy::kWarn;
  std::string why =
      !ran.ok() ? ran.message()
      : exit_code == kPreflightFailed
          ? "preflight failed (see its report above)"
      : exit_code == kPreflightUsage
          ? "preflight: dt-preflight refused its arguments or environment"
          : "preflight: dt-preflight exited with status " +
                std::to_string(exit_code);
  if (fail) {
    return Status::Unavailable(
        why + "; preflight-policy=" + PreflightPolicyName(setting.policy) +
        ": the program was not started");
  }
  *warning = why + "; preflight-policy=warn: starting the program";
  return Status::OK();
}

bool PreflightApplies(const JobOptions& opts, const PreflightSetting& setting,
                      uint32_t step_id) {
  return opts.enabled && setting.seconds != 0 && step_id != kBatchStepId &&
         step_id != kExternStepId;
}

Status RunTaskPreflight(const std::string& program,
                        const PreflightSetting& setting,
                        const PreflightTask& task, std::vector<std::string> env,
                        std::string* warning) {
  int exit_code = -1;
  Status ran = RunPreflightCommand(
      PreflightCommandFor(program, setting, task, std::move(env)), &exit_code);
  return PreflightOutcome(setting, ran, exit_code, warning);
}

}  // namespace dist_train
