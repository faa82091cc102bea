// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// SPANK entry points. Each hook is a thin dispatcher: it switches on the
// context, forwards to submit.cc (sbatch/salloc/srun) or stepd.cc
// (slurmstepd), and never lets an exception cross into Slurm.

#include <cstring>
#include <exception>

#include "binder.h"
#include "spank_api.h"
#include "state.h"
#include "stepd.h"
#include "submit.h"

// SPANK_PLUGIN() gives these internal linkage in C++ (Slurm would report
// "plugin name/type/version symbol missing"), so spell them out.
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
const char plugin_name[] = "dist-train";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;
const unsigned int spank_plugin_version = 1;
}

namespace dist_train {

PluginState& State() {
  static PluginState state;
  return state;
}

const char kOptionEnvVar[] =
    "SLURM_SPANK__SLURM_SPANK_OPTION_dist_train_dist_train";

namespace {

template <typename Fn>
int Guard(const char* hook, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    slurm_error("dist-train: %s: internal error: %s", hook, e.what());
  } catch (...) {
    slurm_error("dist-train: %s: internal error", hook);
  }
  return -1;
}

int OnOption(int /*val*/, const char* optarg, int remote) {
  return Guard("--dist-train", [&] {
    PluginState& st = State();
    JobOptions parsed;
    Status s = ParseJobOptions(optarg, &parsed);
    if (!s.ok()) {
      slurm_error("%s", s.message().c_str());
      // In slurmstepd a failing callback can drain the node: report it
      // from task_init instead (sbatch/srun already refused bad words).
      if (remote) st.deferred = s;
      return remote ? 0 : -1;
    }
    // Slurm may call us twice with the same value in slurmstepd (from the
    // launch message and from the environment): the last one wins.
    st.option_given = true;
    st.options = parsed;
    return 0;
  });
}

struct spank_option kOption = {
    const_cast<char*>("dist-train"),  // NOLINT: spank.h wants char*
    const_cast<char*>("OPTIONS"),
    const_cast<char*>(
        "Wire tasks for distributed training (MASTER_ADDR/PORT, RANK, "
        "WORLD_SIZE, LOCAL_RANK, PET_*...). OPTIONS: comma-separated "
        "mode=task|node, nproc=N|auto, verbose, quiet, on, off. "
        "See dist-train's docs/user-guide.md."),
    2,
    0,
    OnOption};

int Init(spank_t sp, int ac, char** av) {
  PluginState& st = State();
  spank_context_t ctx = spank_context();
  Status s = ParsePluginConfig(ac, av, &st.config);
  if (!s.ok()) {
    slurm_error("%s", s.message().c_str());
    // Failing init inside slurmstepd can drain the node; the job's tasks
    // fail from task_init instead. Everywhere else: fail loudly.
    if (ctx != S_CTX_REMOTE) return -1;
    st.deferred = s;
  }
  if (ctx == S_CTX_SLURMD) {
    SaveTopologyCache(st.config);
    return 0;
  }
  if (ctx == S_CTX_JOB_SCRIPT) return 0;
  spank_err_t rc = spank_option_register(sp, &kOption);
  if (rc != ESPANK_SUCCESS) {
    slurm_error("dist-train: cannot register --dist-train: %s",
                spank_strerror(rc));
    return -1;
  }
  return 0;
}

}  // namespace
}  // namespace dist_train

using dist_train::Guard;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return Guard("init", [&] { return dist_train::Init(sp, ac, av); });
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int /*ac*/,
                                         char** /*av*/) {
  return Guard("init_post_opt", [&] {
    switch (spank_context()) {
      case S_CTX_ALLOCATOR:
        return dist_train::SubmitPostOpt(sp, true);
      case S_CTX_LOCAL:
        return dist_train::SubmitPostOpt(sp, false);
      default:
        return 0;
    }
  });
}

extern "C" int slurm_spank_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return Guard("user_init", [&] { return dist_train::StepdUserInit(sp); });
}

extern "C" int slurm_spank_task_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return Guard("task_init", [&] { return dist_train::StepdTaskInit(sp); });
}

// Defined so that Slurm calls init in the slurmd context too (pyxis
// e569b5e, SchedMD bug 7976), where the topology cache is written.
extern "C" int slurm_spank_slurmd_exit(spank_t /*sp*/, int /*ac*/,
                                       char** /*av*/) {
  return 0;
}

extern "C" int slurm_spank_exit(spank_t /*sp*/, int /*ac*/, char** /*av*/) {
  return Guard("exit", [] {
    dist_train::State() = dist_train::PluginState();
    return 0;
  });
}
