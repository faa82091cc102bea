// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/reserved_vars.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(ReservedVarsTest, WhatThePluginSlurmAndTheScriptSetIsReserved) {
  const std::string plugin = "dist-train's plugin sets it for every step";
  const std::string dt =
      "DT_* belong to dist-train (DT_JOB_TOKEN is the job's secret and must "
      "not be stored in the script)";
  const struct {
    const char* name;
    std::string why;
  } cases[] = {
      {"DT_JOB_TOKEN", dt},
      {"DT_ANYTHING", dt},
      {"MASTER_ADDR", plugin},
      {"MASTER_PORT", plugin},
      {"RANK", plugin},
      {"WORLD_SIZE", plugin},
      {"LOCAL_RANK", plugin},
      {"LOCAL_WORLD_SIZE", plugin},
      {"NODE_RANK", plugin},
      {"GROUP_RANK", plugin},
      {"ROLE_WORLD_SIZE", plugin},
      {"NNODES", plugin},
      {"NPROC_PER_NODE", plugin},
      {"PET_MASTER_PORT", plugin},
      {"PET_NPROC_PER_NODE", plugin},
      {"CUDA_VISIBLE_DEVICES", plugin},
      {"ROCR_VISIBLE_DEVICES", plugin},
      {"SLURM_JOB_ID", "SLURM_* are Slurm's"},
      {"SLURMD_NODENAME", "SLURMD_* are Slurm's"},
      {"dt_point", "dt_* are the generated script's own variables"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(ReservedVarReason(c.name), c.why) << c.name;
}

TEST(ReservedVarsTest, OrdinaryNamesAreFree) {
  for (const char* name :
       {"MSG", "PATH", "NCCL_DEBUG", "PET_MAX_RESTARTS", "rank", "SLURMX",
        "DTX", "MASTER", "HF_HOME", "PYTHONPATH", "OMP_NUM_THREADS",
        "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME",
        "UCX_NET_DEVICES", "CUDA_DEVICE_ORDER", "DT_TIMEOUT", "DT_SHM",
        "DT_SOCKET_ADDR"}) {
    EXPECT_EQ(ReservedVarReason(name), "") << name;
  }
}

}  // namespace
}  // namespace dist_train
