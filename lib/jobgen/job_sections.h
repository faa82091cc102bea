// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The per-section schema of a gen-sbatch config (docs/gen-sbatch.md): which
// keys each section holds and each value's type, range and format. Rules
// that tie keys of different sections together live in job_spec.cc.

#ifndef DIST_TRAIN_LIB_JOBGEN_JOB_SECTIONS_H_
#define DIST_TRAIN_LIB_JOBGEN_JOB_SECTIONS_H_

#include "dist_train/status.h"
#include "jobgen/job_spec.h"
#include "jobgen/yaml_walker.h"

namespace dist_train {

// Reads the document `root` (job, dist_train, launch, env, setup, container,
// preemption, dependency, sweep) into `spec`. Defaults are not applied.
Status ReadJobSections(const YamlSource& src, const YAML::Node& root,
                       JobSpec* spec);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_JOB_SECTIONS_H_
