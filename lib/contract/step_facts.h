// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// What srun looks up once for a whole --dist-train step (the job's end time
// and, with master_addr=nodeaddr, the first node's NodeAddr) and hands to
// every node's slurmstepd in DT_STEP_FACTS, so that a step costs slurmctld
// one RPC instead of one per node, and no RPC runs where slurmstepd forbids
// it (user_init, task_init: fatal since Slurm 23.02).
//
//   DT_STEP_FACTS=job=1234,end=1767225600,node=node1,addr=10.0.0.11
//
// end=0: no time limit. node/addr only with master_addr=nodeaddr. The
// variable never reaches the tasks (task_init removes it).

#ifndef DIST_TRAIN_LIB_CONTRACT_STEP_FACTS_H_
#define DIST_TRAIN_LIB_CONTRACT_STEP_FACTS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "dist_train/status.h"

namespace dist_train {

extern const char kStepFactsVar[];  // "DT_STEP_FACTS"

struct StepFacts {
  uint32_t job_id = 0;
  int64_t job_end_time = 0;  // seconds since the epoch; 0 = no limit
  std::string node;          // first node of the step (nodeaddr only)
  std::string node_addr;     // its NodeAddr (nodeaddr only)
};

std::string FormatStepFacts(const StepFacts& facts);

// Strict: every key once, known keys only, job and end required, node and
// addr together, names of [A-Za-z0-9._:-] only. Errors name the variable
// and the offending part.
Status ParseStepFacts(std::string_view text, StepFacts* facts);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_STEP_FACTS_H_
