// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Slurm node lists ("node[01-04,7],gpu3"), expanded by libslurm's own
// slurm_hostlist_* functions. Inside srun/sbatch/slurmstepd those symbols
// come from the host process; tools and tests link -lslurm.

#ifndef DIST_TRAIN_LIB_BASE_HOSTLIST_H_
#define DIST_TRAIN_LIB_BASE_HOSTLIST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dist_train/status.h"

namespace dist_train {

// The most hosts a node list may name. libslurm expands a name with
// several bracket groups as a product ("a[0-999]b[0-999]c[0-999]": 36 bytes
// that make libslurm abort on malloc), so lists are counted from their text
// and refused above this before libslurm sees them. Slurm itself caps a
// cluster at 65533 nodes.
constexpr uint64_t kMaxHosts = 65536;

// The hosts `nodelist` names, counted from the text without expanding it
// (saturating at kMaxHosts + 1). False for a list libslurm would misread:
// unbalanced or nested brackets, a bracket item that is not a number or an
// ascending range, blanks inside brackets, a number that overflows 64 bits.
bool CountHosts(std::string_view nodelist, uint64_t* count);

// The first host of `nodelist` and the number of hosts. `what` names the
// source (e.g. "SLURM_STEP_NODELIST") for the error message. Lists over
// kMaxHosts are refused: "WHAT='LIST' names more than 65536 hosts (the cap)".
Status FirstHost(std::string_view nodelist, const char* what,
                 std::string* first, int* count);

// Every host of `nodelist`, in order (same checks and cap as FirstHost).
Status ExpandHosts(std::string_view nodelist, const char* what,
                   std::vector<std::string>* hosts);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_HOSTLIST_H_
