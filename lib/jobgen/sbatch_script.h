// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Renders a JobSpec into an sbatch script through a template (templates/
// <style>.sbatch, or the user's --template). Every value that reaches the
// shell is quoted (lib/shell_quote.h); every #SBATCH line comes before the
// first command.

#ifndef DIST_TRAIN_LIB_JOBGEN_SBATCH_SCRIPT_H_
#define DIST_TRAIN_LIB_JOBGEN_SBATCH_SCRIPT_H_

#include <string>
#include <vector>

#include "dist_train/status.h"
#include "jobgen/job_spec.h"
#include "jobgen/sweep.h"

namespace dist_train {

// A slice of the sweep submitted as one job array.
struct ScriptPart {
  size_t first = 0;  // index of its first point
  size_t count = 0;  // points (array tasks 0..count-1)
};

// Splits `points` sweep points into arrays of at most `max_array_size`
// tasks; one part (count 0) when there is no sweep.
std::vector<ScriptPart> SplitSweep(size_t points, uint32_t max_array_size);

// Placeholders a template may use: {{header}} {{sbatch}} {{setup}} {{env}}
// {{run}} {{srun_options}} {{command}}. An unknown one is an error naming
// `template_name` and its line.
Status RenderScript(const JobSpec& spec, const std::vector<SweepPoint>& points,
                    const ScriptPart& part, const std::string& template_text,
                    const std::string& template_name, std::string* out);

// "index  lr     bs\n0      0.1    32\n..." for --list-sweep.
std::string SweepTable(const std::vector<SweepPoint>& points);

// A point's parameters as one line of JSON, as params.json holds them: a
// value that is exactly a JSON number is a number, anything else a string.
std::string PointParamsJson(const SweepPoint& point);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_SBATCH_SCRIPT_H_
