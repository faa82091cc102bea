// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// dt-preflight: the preflight gate of one task (health/preflight.h). The
// plugin runs it in every task of a step before the program when the job
// asked for --dist-train=preflight; by hand, run it as the step:
//   srun --dist-train dt-preflight --seconds 30 --policy fail
// Exit codes: 0 passed (or warned), 2 usage, 3 a node is bad or the check
// could not complete, and the policy is fail or requeue (then task 0 has
// requeued the job without the bad nodes, when DT_MAX_REQUEUES allows).

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "health/preflight.h"
#include "runtime/watchdog.h"

namespace {

// A stream whose every write goes to stderr at once and is kept in `*copy`.
FILE* TeeToStderr(std::string* copy) {
  cookie_io_functions_t io{};
  io.write = [](void* cookie, const char* buf, size_t size) -> ssize_t {
    static_cast<std::string*>(cookie)->append(buf, size);
    return fwrite(buf, 1, size, stderr) == size ? static_cast<ssize_t>(size)
                                                : -1;
  };
  FILE* f = fopencookie(copy, "w", io);
  if (f != nullptr) setvbuf(f, nullptr, _IOLBF, 0);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  using dist_train::PreflightRun;
  PreflightRun run;
  std::string policy = "warn";
  CLI::App app{"dt-preflight: check this step's nodes and network"};
  app.set_version_flag("--version", DT_VERSION);
  app.add_option("--seconds", run.seconds,
                 "the whole check's time bound (default 60)")
      ->check(CLI::Range(5, 3600));
  app.add_option("--policy", policy, "warn (default), fail or requeue")
      ->check(CLI::IsMember({"warn", "fail", "requeue"}));
  app.add_option("--rank", run.rank, "this task (default SLURM_PROCID)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--size", run.size, "tasks in all (default SLURM_NTASKS)")
      ->check(CLI::PositiveNumber);
  app.add_option("--probe", run.probe,
                 "1: this task probes its node (default: SLURM_LOCALID is 0)")
      ->check(CLI::Range(0, 1));
  app.add_option("--identity", run.identity,
                 "what peers must present (default JOB.STEP:preflight)");
  app.add_option("--min-cpu-gflops", run.score.minimum.cpu_gflops,
                 "a node below this CPU rate is slow (plugstack.conf "
                 "preflight_min_cpu_gflops)")
      ->check(CLI::Range(0.0, dist_train::kPreflightMaxRate));
  app.add_option("--min-mem-gbps", run.score.minimum.mem_gbps,
                 "a node below this memory bandwidth is slow (plugstack.conf "
                 "preflight_min_mem_gbps)")
      ->check(CLI::Range(0.0, dist_train::kPreflightMaxRate));
  app.add_option("--min-link-mbps", run.score.minimum.link_mbps,
                 "a node whose bound interface links slower is slow "
                 "(plugstack.conf preflight_min_link_mbps)")
      ->check(CLI::Range(uint32_t{0}, dist_train::kPreflightMaxLinkMbps));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : dist_train::kPreflightUsage;
  }
  dist_train::ParsePreflightPolicy(policy, &run.policy);
  const dist_train::EnvMap program_env = dist_train::ProcessEnv();
  // The check's bound is --seconds, not the program's DT_TIMEOUT, and it
  // needs no hang watchdog of its own (DT_WATCHDOG is the program's).
  unsetenv("DT_TIMEOUT");
  unsetenv("DT_WATCHDOG");
  dist_train::EnvMap env = dist_train::ProcessEnv();
  dist_train::Status s = dist_train::ResolvePreflightRun(env, &run);
  if (!s.ok()) {
    fprintf(stderr, "dt-preflight: %s\n", s.message().c_str());
    return dist_train::kPreflightUsage;
  }
  // Task 0's report also goes where the program's watchdog keeps the
  // step's records, for dt-status (each line still reaches stderr at once).
  std::string report;
  FILE* out = run.rank == 0 ? TeeToStderr(&report) : nullptr;
  int rc = dist_train::RunPreflight(env, run, out ? out : stderr);
  if (out == nullptr) return rc;
  fclose(out);
  s = dist_train::SaveInWatchdogDir(program_env, "preflight.txt", report);
  if (!s.ok())
    fprintf(stderr, "dt-preflight: report not kept for dt-status: %s\n",
            s.message().c_str());
  return rc;
}
