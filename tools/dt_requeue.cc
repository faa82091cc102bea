// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// dt-requeue: requeue the current job (array task) through libslurm, for
// job scripts on nodes or in containers without `scontrol`. Refuses past a
// maximum (--max, else DT_MAX_REQUEUES). Exit codes: 0 requeued, 1 refused
// or failed, 2 usage.

#include <CLI/CLI.hpp>
#include <cstdio>

#include "dist_train/preemption.h"

int main(int argc, char** argv) {
  int max = -1;
  CLI::App app{"dt-requeue: requeue this Slurm job without scontrol"};
  app.set_version_flag("--version", DT_VERSION);
  app.add_option("--max", max,
                 "refuse once SLURM_RESTART_COUNT reached this (default: "
                 "DT_MAX_REQUEUES, else unlimited)")
      ->check(CLI::Range(0, 1000000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  dist_train::Status s = dist_train::RequeueJob(max);
  if (!s.ok()) {
    fprintf(stderr, "dt-requeue: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
