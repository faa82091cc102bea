// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// gen-sbatch's input: one YAML file (plus --set overrides) validated into a
// JobSpec. Every key, default and rule is documented in docs/gen-sbatch.md.
// Errors name the file, line and column and the key ("train.yaml:4:10:
// job.nodes: expected a positive integer, got 'two'"); yaml-cpp stays out
// of this header.
//
// The parts: yaml_walker.h (yaml-cpp adapter: loading, typed reads, key
// tables), job_sections.h (each section's keys), sweep_spec.h (the sweep
// section and its kinds), overrides.h (--set), job_spec.cc (rules between
// keys, defaults).

#ifndef DIST_TRAIN_LIB_JOBGEN_JOB_SPEC_H_
#define DIST_TRAIN_LIB_JOBGEN_JOB_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dist_train/status.h"
#include "jobgen/sweep.h"

namespace dist_train {

enum class LaunchStyle { kSrun, kTorchrun, kDtRun, kCustom };
enum class PassAs { kEnv, kArgs, kBoth };

const char* LaunchStyleName(LaunchStyle style);

struct JobSpec {
  std::string source;  // the config file, for messages and the header

  // job: resources (0 / "" = not set, Slurm's default applies)
  std::string name;  // default: the config file's stem
  uint32_t nodes = 1;
  uint32_t gpus_per_node = 0;
  uint32_t tasks_per_node = 0;  // default: GPUs per node (srun) or 1
  uint32_t cpus_per_task = 0;
  std::string mem, time, partition, account, qos, constraint;
  bool exclusive = false;
  std::string output, error;  // default: %x-%j.out (sweeps: %x-%A_%a.out)

  // dist_train: the --dist-train words, canonical and validated
  bool dist_train = true;
  std::string dist_train_options;  // "" = plain --dist-train
  // dist_train.wiring: plugin (#SBATCH --dist-train) or wrapper (dt-wire:
  // clusters without the plugin). Default: plugin.
  bool wrapper = false;

  // launch
  LaunchStyle style = LaunchStyle::kSrun;
  std::vector<std::string> command;  // words, each quoted in the script
  std::vector<std::string> srun_args;
  // style torchrun: the launcher's words, e.g. [python3, -m,
  // torch.distributed.run]; empty: [torchrun].
  std::vector<std::string> launcher;
  uint32_t nproc_per_node = 0;  // torchrun / dt-run workers per node

  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> setup;  // verbatim shell lines

  // container (pyxis)
  std::string container_image, container_workdir;
  std::vector<std::string> container_mounts;

  // preemption
  std::string signal;  // e.g. USR1; "" = none
  uint32_t signal_seconds = 120;
  bool requeue = false;
  uint32_t max_requeues = 0;
  std::string checkpoint_dir;

  std::vector<std::string> dependencies;

  // sweep
  bool has_sweep = false;
  SweepSpec sweep;
  uint32_t parallel = 0;  // %P of --array; 0 = no limit
  PassAs pass_as = PassAs::kEnv;
  std::string arg_format = "--{name}={value}";
  uint32_t max_array_size = 1001;  // Slurm's default MaxArraySize
  std::string run_dir = "runs";
  // sweep.workdir: run (default: each point works in its run directory, so
  // points that write to their working directory never share it) or
  // submit (where sbatch ran).
  bool workdir_run = true;
};

// Loads `path`, applies `sets` ("job.nodes=4"), validates. `out` is
// untouched on error.
Status LoadJobSpec(const std::string& path,
                   const std::vector<std::string>& sets, JobSpec* out);

// The same from YAML text (tests); `name` stands for the file in messages.
Status ParseJobSpec(const std::string& yaml, const std::string& name,
                    const std::vector<std::string>& sets, JobSpec* out);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_JOB_SPEC_H_
