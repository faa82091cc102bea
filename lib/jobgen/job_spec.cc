// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/job_spec.h"

#include <utility>

#include "contract/options.h"
#include "jobgen/job_sections.h"
#include "jobgen/overrides.h"
#include "jobgen/sweep_spec.h"
#include "jobgen/yaml_walker.h"

namespace dist_train {
namespace {

// Rules between keys are checked once every section is read (a key's own
// type and range are the sections' business). First: a command, and tasks
// per node that fit the launch style.
Status CheckTasks(const YamlSource& c, const YAML::Node& root,
                  const JobSpec& s) {
  YAML::Node job = root["job"], launch = root["launch"];
  bool per_gpu = s.style == LaunchStyle::kSrun;
  if (s.command.empty())
    return YamlError(c, launch ? launch : root, "launch.command",
                     "is required (a list of words)");
  if (per_gpu && s.gpus_per_node > 0 && s.tasks_per_node > s.gpus_per_node) {
    return YamlError(c, job, "job.tasks_per_node",
                     std::to_string(s.tasks_per_node) +
                         " tasks per node but job.gpus_per_node is " +
                         std::to_string(s.gpus_per_node) +
                         ": with launch.style srun each task drives one GPU");
  }
  if (!per_gpu && s.style != LaunchStyle::kCustom && s.tasks_per_node > 1) {
    return YamlError(
        c, job, "job.tasks_per_node",
        std::string("launch.style ") + LaunchStyleName(s.style) +
            " runs one launcher per node, so tasks_per_node must be 1 "
            "(workers come from launch.nproc_per_node)");
  }
  return Status::OK();
}

// Then: the --dist-train options, srun_args, container and requeues against
// the launch style.
Status CheckOptions(const YamlSource& c, const YAML::Node& root,
                    const JobSpec& s) {
  YAML::Node launch = root["launch"];
  bool per_gpu = s.style == LaunchStyle::kSrun;
  JobOptions opts;  // dist_train.options was validated when it was read
  DT_RETURN_IF_ERROR(ParseJobOptions(s.dist_train_options.c_str(), &opts));
  Mode want = per_gpu ? Mode::kTask : Mode::kNode;
  if (s.style != LaunchStyle::kCustom && opts.mode && *opts.mode != want) {
    return YamlError(c, root["dist_train"], "dist_train.mode",
                     std::string("mode ") + ModeName(*opts.mode) +
                         " does not fit launch.style " +
                         LaunchStyleName(s.style) + " (which needs mode " +
                         ModeName(want) + ")");
  }
  if (s.style != LaunchStyle::kTorchrun && !s.launcher.empty()) {
    return YamlError(c, launch["launcher"], "launch.launcher",
                     std::string("applies to style torchrun only, not ") +
                         LaunchStyleName(s.style));
  }
  if (s.style == LaunchStyle::kCustom &&
      (!s.srun_args.empty() || !s.container_image.empty())) {
    return YamlError(
        c, launch, "launch.style",
        "custom runs launch.command as given, so launch.srun_args and "
        "container cannot apply; put the srun options into launch.command");
  }
  if (s.max_requeues > 0 && !s.requeue)
    return YamlError(c, root["preemption"], "preemption.max_requeues",
                     "needs preemption.requeue: true");
  if (opts.preflight_policy == PreflightPolicy::kRequeue && !s.requeue)
    return YamlError(c, root["dist_train"], "dist_train.preflight_policy",
                     "requeue needs preemption.requeue: true (the job must "
                     "be requeueable, its output appended)");
  if (opts.watchdog_requeue.value_or(false) && !s.requeue)
    return YamlError(c, root["dist_train"], "dist_train.watchdog_policy",
                     "requeue needs preemption.requeue: true (the job must "
                     "be requeueable, its output appended)");
  if (opts.node_loss_requeue.value_or(false) && !s.requeue)
    return YamlError(c, root["dist_train"], "dist_train.node_loss",
                     "requeue needs preemption.requeue: true (the job must "
                     "be requeueable, its output appended)");
  if (!s.dist_train && s.wrapper)
    return YamlError(c, root["dist_train"], "dist_train.wiring",
                     "wrapper given but enabled is false");
  if (!s.dist_train && !s.dist_train_options.empty())
    return YamlError(c, root["dist_train"], "dist_train",
                     "options given but enabled is false");
  if (!s.dist_train && s.style != LaunchStyle::kSrun &&
      s.style != LaunchStyle::kCustom) {
    return YamlError(
        c, root["dist_train"], "dist_train.enabled",
        std::string("launch.style ") + LaunchStyleName(s.style) +
            " needs dist-train's node-mode variables; it cannot be false");
  }
  if (opts.nproc &&
      (per_gpu || (s.nproc_per_node > 0 && *opts.nproc != s.nproc_per_node))) {
    return YamlError(
        c, root["dist_train"], "dist_train.nproc",
        per_gpu ? std::string("applies to torchrun/dt-run only; with "
                              "srun each task is one worker")
                : "disagrees with launch.nproc_per_node; set only one");
  }
  return Status::OK();
}

// python, python3, python3.11, /usr/bin/python3 ...
bool IsPythonInterpreter(const std::string& word) {
  std::string base = word.substr(word.rfind('/') + 1);
  if (base.compare(0, 6, "python") != 0) return false;
  return base.find_first_not_of("0123456789.", 6) == std::string::npos;
}

// torchrun runs its first argument with Python itself: `torchrun python3
// train.py` runs the interpreter binary as a Python script.
Status CheckTorchrunCommand(const YamlSource& c, const YAML::Node& root,
                            const JobSpec& s) {
  if (s.style != LaunchStyle::kTorchrun || s.command.empty() ||
      !IsPythonInterpreter(s.command[0]))
    return Status::OK();
  return YamlError(c, root["launch"]["command"], "launch.command",
                   "starts with '" + s.command[0] +
                       "', but torchrun runs the script with Python itself: "
                       "drop it (command: [train.py, ...])");
}

Status CheckCombinations(const YamlSource& c, const YAML::Node& root,
                         const JobSpec& s) {
  DT_RETURN_IF_ERROR(CheckTasks(c, root, s));
  DT_RETURN_IF_ERROR(CheckTorchrunCommand(c, root, s));
  DT_RETURN_IF_ERROR(CheckOptions(c, root, s));
  return CheckSweepNames(c, root["sweep"], s.sweep);
}

void ApplyDefaults(JobSpec* s) {
  if (s->tasks_per_node == 0) {
    s->tasks_per_node = (s->style == LaunchStyle::kSrun && s->gpus_per_node > 0)
                            ? s->gpus_per_node
                            : 1;
  }
  if (s->nproc_per_node == 0)
    s->nproc_per_node = s->gpus_per_node > 0 ? s->gpus_per_node : 1;
  if (s->output.empty())
    s->output = s->has_sweep ? "%x-%A_%a.out" : "%x-%j.out";
  if (s->dist_train && s->style != LaunchStyle::kSrun &&
      s->style != LaunchStyle::kCustom) {
    JobOptions opts;
    // Cannot fail: CheckOptions parsed the same words before defaults apply.
    if (!ParseJobOptions(s->dist_train_options.c_str(), &opts).ok()) return;
    opts.mode = Mode::kNode;
    if (!opts.nproc) opts.nproc = s->nproc_per_node;
    s->dist_train_options = FormatJobOptions(opts);
  }
}

std::string Stem(const std::string& path) {
  std::string base = path.substr(
      path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

// The loaded document `root` (may be null: an empty file) with `sets`
// applied, validated into `out`.
Status Build(const std::string& file, YAML::Node root,
             const std::vector<std::string>& sets, JobSpec* out) {
  YamlSource c{file, {}};
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const std::string& set : sets)
    DT_RETURN_IF_ERROR(ApplyOverride(set, root, &c));
  JobSpec s;
  s.source = file;
  s.name = Stem(file);
  DT_RETURN_IF_ERROR(ReadJobSections(c, root, &s));
  DT_RETURN_IF_ERROR(CheckCombinations(c, root, s));
  if (s.name.empty() ||
      s.name.find_first_of(" \t\r\n\"'\\") != std::string::npos) {
    return Status::InvalidArgument(
        file + ": the file name gives the job name '" + s.name +
        "', which cannot be used in an #SBATCH line: set job.name");
  }
  ApplyDefaults(&s);
  *out = std::move(s);
  return Status::OK();
}

}  // namespace

const char* LaunchStyleName(LaunchStyle style) {
  switch (style) {
    case LaunchStyle::kSrun:
      return "srun";
    case LaunchStyle::kTorchrun:
      return "torchrun";
    case LaunchStyle::kDtRun:
      return "dt-run";
    case LaunchStyle::kCustom:
      return "custom";
  }
  return "?";
}

Status LoadJobSpec(const std::string& path,
                   const std::vector<std::string>& sets, JobSpec* out) {
  YAML::Node root;
  DT_RETURN_IF_ERROR(LoadYamlFile(path, &root));
  return CatchYamlErrors(path, [&] { return Build(path, root, sets, out); });
}

Status ParseJobSpec(const std::string& yaml, const std::string& name,
                    const std::vector<std::string>& sets, JobSpec* out) {
  YAML::Node root;
  DT_RETURN_IF_ERROR(LoadYamlText(yaml, name, &root));
  return CatchYamlErrors(name, [&] { return Build(name, root, sets, out); });
}

}  // namespace dist_train
