// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Test helpers for the env contract: one task of a step laid out as Slurm
// lays it out (TaskOf), and the variables the contract plans for it (Plan).

#ifndef DIST_TRAIN_LIB_TESTING_TESTING_CONTRACT_H_
#define DIST_TRAIN_LIB_TESTING_TESTING_CONTRACT_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "contract/contract.h"

namespace dist_train {
namespace testing_contract {

inline const std::string kToken(64, 'a');

// One task of a regular step laid out block-wise like Slurm does:
// `tasks_per_node[k]` tasks on node k, global rank `rank`.
inline SlurmInputs TaskOf(const std::string& nodelist,
                          const std::vector<uint32_t>& tasks_per_node,
                          uint32_t rank, uint32_t job = 1000,
                          uint32_t step = 0) {
  SlurmInputs in;
  in.job_id = job;
  in.step_id = step;
  in.step_nnodes = static_cast<uint32_t>(tasks_per_node.size());
  for (uint32_t n : tasks_per_node) in.total_tasks += n;
  uint32_t first = 0;
  for (uint32_t node = 0; node < tasks_per_node.size(); ++node) {
    if (rank < first + tasks_per_node[node]) {
      in.node_id = node;
      in.local_tasks = tasks_per_node[node];
      in.local_task_id = rank - first;
      break;
    }
    first += tasks_per_node[node];
  }
  in.global_task_id = rank;
  in.cpus_per_task = 2;
  in.env = {{"SLURM_STEP_NODELIST", nodelist},
            {"SLURM_JOB_NODELIST", nodelist},
            {"SLURM_PROCID", std::to_string(rank)},
            {"SLURM_LOCALID", std::to_string(in.local_task_id)},
            {"SLURM_NODEID", std::to_string(in.node_id)},
            {"SLURMD_NODENAME", "n" + std::to_string(in.node_id)},
            {"DT_JOB_TOKEN", kToken}};
  return in;
}

inline EnvMap AsMap(const EnvAssignments& set) {
  return EnvMap(set.begin(), set.end());
}

inline EnvMap Plan(const SlurmInputs& in, const char* options = "on",
                   const PluginConfig& cfg = PluginConfig(),
                   EnvPlan* plan_out = nullptr) {
  JobOptions opts;
  EXPECT_TRUE(ParseJobOptions(options, &opts).ok());
  EnvPlan plan;
  Status s = PlanTaskEnv(cfg, opts, in, &plan);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (plan_out) *plan_out = plan;
  return AsMap(plan.set);
}

}  // namespace testing_contract
}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TESTING_TESTING_CONTRACT_H_
