// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// SPANK entry points. Each hook is a thin dispatcher: it switches on the
// context, forwards to submit.cc (sbatch/salloc/srun) or stepd.cc
// (slurmstepd) with the real SpankHost, and never lets an exception cross
// into Slurm.

#include <cstring>
#include <exception>
#include <string>

#include "binder.h"
#include "contract/options.h"
#include "slurm_spank_host.h"
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
#ifndef DT_PLUGIN_VERSION  // tests build a copy that claims another release
#define DT_PLUGIN_VERSION SLURM_VERSION_NUMBER
#endif
const unsigned int plugin_version = DT_PLUGIN_VERSION;
const unsigned int spank_plugin_version = 1;
// The release this plugin is for, readable without loading it (a plugin of
// another release does not load): dt-check-install greps for it.
__attribute__((used)) const char dt_slurm_build_mark[] =
    "dist-train-built-for-slurm=" DT_SLURM_VERSION;
}

namespace dist_train {

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

// Built from the word table (lib/contract/options.cc) so that srun --help
// lists every word; Slurm keeps the pointer as long as the plugin is loaded,
// hence a static string.
char* OptionUsage() {
  static std::string usage = OptionHelpText();
  return usage.data();
}

struct spank_option kOption = {
    const_cast<char*>("dist-train"),  // NOLINT: spank.h wants char*
    const_cast<char*>("OPTIONS"),     // arginfo
    OptionUsage(),                    // usage
    2,                                // has_arg: the value is optional
    0,                                // val
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
using dist_train::SlurmSpankHost;
using dist_train::State;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return Guard("init", [&] { return dist_train::Init(sp, ac, av); });
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int /*ac*/,
                                         char** /*av*/) {
  return Guard("init_post_opt", [&] {
    SlurmSpankHost host(sp);
    switch (host.Context()) {
      case S_CTX_ALLOCATOR:
        return dist_train::SubmitPostOpt(host, State(), true);
      case S_CTX_LOCAL:
        return dist_train::SubmitPostOpt(host, State(), false);
      case S_CTX_REMOTE:
        return dist_train::StepdInitPostOpt(host, State());
      default:
        return 0;
    }
  });
}

extern "C" int slurm_spank_local_user_init(spank_t sp, int /*ac*/,
                                           char** /*av*/) {
  return Guard("local_user_init", [&] {
    SlurmSpankHost host(sp);
    return host.Context() == S_CTX_LOCAL
               ? dist_train::SrunLocalUserInit(host, State())
               : 0;
  });
}

extern "C" int slurm_spank_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return Guard("user_init", [&] {
    SlurmSpankHost host(sp);
    return dist_train::StepdUserInit(host, State());
  });
}

extern "C" int slurm_spank_task_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return Guard("task_init", [&] {
    SlurmSpankHost host(sp);
    return dist_train::StepdTaskInit(host, State());
  });
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
