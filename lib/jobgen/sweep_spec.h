// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The `sweep:` section of a gen-sbatch config: its kinds (grid, zip, range,
// points, random; see jobgen/sweep.h for what each expands to) and options
// (parallel, pass_as, arg_format, max_array_size, run_dir, workdir). The kinds
// are one table in sweep_spec.cc: the parser, the "did you mean" and the lists
// in messages all come from it, so a new kind is one entry there.

#ifndef DIST_TRAIN_LIB_JOBGEN_SWEEP_SPEC_H_
#define DIST_TRAIN_LIB_JOBGEN_SWEEP_SPEC_H_

#include <string>
#include <vector>

#include "dist_train/status.h"
#include "jobgen/job_spec.h"
#include "jobgen/sweep.h"
#include "jobgen/yaml_walker.h"

namespace dist_train {

// Reads the section into spec->sweep, spec->has_sweep and the sweep options
// of `spec`. A missing or null section is no sweep. At least one kind is
// needed; points and random stand alone, grid, zip and range combine.
Status ParseSweepSection(const YamlSource& src, const YAML::Node& section,
                         JobSpec* spec);

// Sweep parameters become shell variables: each name once, and none of the
// shell's, the script's (dt_*, DT_*) or Slurm's own. Errors point at
// `section`.
Status CheckSweepNames(const YamlSource& src, const YAML::Node& section,
                       const SweepSpec& sweep);

// The kinds' keys in table order: grid, zip, range, points, random.
std::vector<std::string> SweepKindNames();

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_SWEEP_SPEC_H_
