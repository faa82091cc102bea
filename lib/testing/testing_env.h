// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Test helpers for code that reads the process environment: set or unset
// variables for one scope (restored after, whatever the test did), and the
// variables that make a forked rank's Communicator from the environment.

#ifndef DIST_TRAIN_LIB_TESTING_TESTING_ENV_H_
#define DIST_TRAIN_LIB_TESTING_TESTING_ENV_H_

#include <stdlib.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dist_train/runtime.h"

namespace dist_train {
namespace testing_env {

// Sets (value) or unsets (nullopt) variables until it goes out of scope,
// then puts back what was there before.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) Put(*it);
  }

  void Set(const std::string& name, const std::string& value) {
    Save(name);
    setenv(name.c_str(), value.c_str(), 1);
  }
  void Unset(const std::string& name) {
    Save(name);
    unsetenv(name.c_str());
  }

 private:
  using Saved = std::pair<std::string, std::optional<std::string>>;
  void Save(const std::string& name) {
    const char* old = getenv(name.c_str());
    saved_.emplace_back(name,
                        old ? std::optional<std::string>(old) : std::nullopt);
  }
  static void Put(const Saved& s) {
    if (s.second) {
      setenv(s.first.c_str(), s.second->c_str(), 1);
    } else {
      unsetenv(s.first.c_str());
    }
  }
  std::vector<Saved> saved_;
};

// Every variable the runtime takes its rank, world and rendezvous from
// (runtime_env.cc), so that a test starts from none of them.
inline const char* const kRankVars[] = {"RANK",
                                        "WORLD_SIZE",
                                        "LOCAL_RANK",
                                        "LOCAL_WORLD_SIZE",
                                        "NODE_RANK",
                                        "MASTER_ADDR",
                                        "MASTER_PORT",
                                        "DT_JOB_TOKEN",
                                        "DT_TIMEOUT",
                                        "DT_SOCKET_ADDR",
                                        "SLURM_PROCID",
                                        "SLURM_NTASKS",
                                        "SLURM_STEP_NUM_TASKS",
                                        "SLURM_LOCALID",
                                        "SLURM_NODEID",
                                        "SLURM_JOB_ID",
                                        "SLURM_STEP_ID",
                                        "SLURM_STEP_NODELIST",
                                        "SLURM_RESTART_COUNT",
                                        "DT_JOB_DEADLINE",
                                        "PET_NPROC_PER_NODE"};

// The environment of a rank started as `o` says (rank, world size, master,
// token, timeout), with no other of kRankVars set.
inline void ExportOptions(const Options& o, ScopedEnv* env) {
  for (const char* name : kRankVars) env->Unset(name);
  env->Set("RANK", std::to_string(o.rank));
  env->Set("WORLD_SIZE", std::to_string(o.world_size));
  env->Set("MASTER_ADDR", o.master_addr);
  env->Set("MASTER_PORT", std::to_string(o.master_port));
  if (!o.job_token.empty()) env->Set("DT_JOB_TOKEN", o.job_token);
  env->Set("DT_TIMEOUT", std::to_string(o.timeout_seconds));
}

}  // namespace testing_env
}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TESTING_TESTING_ENV_H_
