// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// How Slurm signals a step (its ProctrackType, which SPANK cannot read):
// the plugstack word, and the guess from a task's /proc/self/cgroup.

#ifndef DIST_TRAIN_LIB_RELAY_PROCTRACK_H_
#define DIST_TRAIN_LIB_RELAY_PROCTRACK_H_

#include <string_view>

namespace dist_train {

// How Slurm signals a step, i.e. its ProctrackType (SPANK cannot read it).
enum class Proctrack {
  kAuto,       // infer from /proc/self/cgroup (DetectProctrack)
  kCgroup,     // only the task processes: relay everything
  kPgid,       // task 0's process group: relay warnings to other groups
  kLinuxproc,  // every descendant already: no relay needed
};

// Parses plugstack's proctrack=auto|cgroup|pgid|linuxproc.
bool ParseProctrack(std::string_view text, Proctrack* out);
const char* ProctrackName(Proctrack p);

// Slurm's proctrack from the content of /proc/self/cgroup of a task:
// a cgroup v1 freezer path or a v2 path with job_N/step_M is kCgroup,
// anything else kPgid (linuxproc cannot be told apart from pgid; there the
// relay receives nothing, because Slurm skips processes named slurmstepd).
Proctrack DetectProctrack(std::string_view proc_self_cgroup);

// `configured`, with kAuto resolved from this process's /proc/self/cgroup
// (from the file at `cgroup_file`: tests).
Proctrack ResolveProctrack(Proctrack configured);
Proctrack ResolveProctrack(Proctrack configured, const char* cgroup_file);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RELAY_PROCTRACK_H_
