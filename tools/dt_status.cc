// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// dt-status: the live per-rank table of a running job's dist-train steps
// (health/step_status.h): host, rank, last progress, step and compute time,
// straggler and hang flags. Reads the step's watchdog directory (jobs run
// with --dist-train=watchdog=SECONDS), which only the job's owner can read;
// the job's owner and working directory come from slurmctld. Exit codes:
// 0 shown, 1 refused or nothing to show, 2 usage.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "base/parse.h"
#include "base/slurm_compat.h"
#include "health/step_status.h"
#include "runtime/watchdog.h"

namespace {

using dist_train::Status;

struct Args {
  std::string job;  // JOBID or JOBID.STEP
  std::string dir;
  bool json = false;
  double watch = 0;  // seconds between refreshes; 0: once
};

// The job's working directory from slurmctld, refused unless it is ours.
Status JobDir(uint32_t job_id, std::string* dir, std::string* state) {
  dist_train::JobPlace place;
  DT_RETURN_IF_ERROR(dist_train::SlurmInitOnce());
  DT_RETURN_IF_ERROR(dist_train::LoadJobPlace(job_id, &place));
  if (!place.found) {
    return Status::NotFound("slurmctld has no job " + std::to_string(job_id) +
                            " (ended long ago?); give --dir DIR to read "
                            "its watchdog directory anyway");
  }
  if (place.user_id != getuid() && getuid() != 0) {
    return Status::PermissionDenied(
        "job " + std::to_string(job_id) + " belongs to uid " +
        std::to_string(place.user_id) +
        "; dt-status shows a job to its owner only");
  }
  *dir = place.work_dir;
  *state = place.state;
  return Status::OK();
}

Status ShowOnce(const Args& a, const std::string& job, const std::string& step,
                bool* running) {
  std::string dir = a.dir, state;
  if (a.dir.empty() || a.watch > 0) {  // with --dir, Slurm only to watch
    uint64_t id;
    if (!dist_train::ParseUint(job, 1, UINT32_MAX, &id)) {
      return Status::InvalidArgument("'" + dist_train::ShownValue(job) +
                                     "' is not a job id (JOBID or "
                                     "JOBID.STEP)");
    }
    std::string job_dir;
    Status placed = JobDir(static_cast<uint32_t>(id), &job_dir, &state);
    if (a.dir.empty()) {
      DT_RETURN_IF_ERROR(placed);
      dir = job_dir;
    }
    *running = placed.ok() && (state == "RUNNING" || state == "COMPLETING");
  }
  std::vector<std::string> names;
  DT_RETURN_IF_ERROR(dist_train::FindStepDirs(dir, job, &names));
  std::string name = names.back();
  if (!step.empty()) {
    name = dist_train::kWatchdogDirPrefix + job + "." + step;
    if (std::find(names.begin(), names.end(), name) == names.end())
      return Status::NotFound("step " + job + "." + step + " has no " + name +
                              " in " + dir);
  }
  dist_train::StepStatus status;
  DT_RETURN_IF_ERROR(dist_train::ReadStepStatus(dir, name, &status));
  status.job_ended = !state.empty() && !*running;
  int64_t now = time(nullptr);
  std::string text = a.json ? dist_train::FormatStatusJson(status, now)
                            : dist_train::FormatStatusTable(status, now);
  if (a.watch > 0 && !a.json) fputs("\033[H\033[2J", stdout);
  fputs(text.c_str(), stdout);
  if (!state.empty() && !a.json) printf("job state: %s\n", state.c_str());
  fflush(stdout);
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{
      "dt-status: the live per-rank table of a running dist-train job "
      "(steps run with --dist-train=watchdog=SECONDS)"};
  app.set_version_flag("--version", DT_VERSION);
  app.add_option(
         "job", a.job,
         "JOBID, or JOBID.STEP (JOBID.STEP.rN: of the job's Nth requeued "
         "run; default: the last run's last step)")
      ->required();
  app.add_option("--dir", a.dir,
                 "where the job's watchdog directories are (its "
                 "DT_WATCHDOG_DIR; default: the job's working directory)");
  app.add_flag("--json", a.json, "one JSON object instead of the table");
  app.add_option("--watch", a.watch,
                 "refresh every SECONDS until the job ends (Ctrl-C stops)")
      ->expected(0, 1)
      ->default_str("2")
      ->check(CLI::Range(0.2, 3600.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (app.count("--watch") && a.watch == 0) a.watch = 2;
  std::string job = a.job, step;
  size_t dot = job.find('.');
  if (dot != std::string::npos) {
    step = job.substr(dot + 1);
    job = job.substr(0, dot);
  }
  for (;;) {
    bool running = false;
    Status s = ShowOnce(a, job, step, &running);
    if (!s.ok()) {
      fprintf(stderr, "dt-status: %s\n", s.message().c_str());
      return 1;
    }
    if (a.watch <= 0 || !running) return 0;
    usleep(static_cast<useconds_t>(a.watch * 1e6));
  }
}
