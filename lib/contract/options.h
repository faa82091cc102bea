// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The two configuration inputs of the SPANK plugin, each parsed by a pure
// function with exact, tested error messages:
//   - JobOptions: the user's `--dist-train[=WORD,WORD...]`;
//   - PluginConfig: the admin's plugstack.conf arguments (key=value).
// Precedence (applied by the plugin): --dist-train words > plugstack
// defaults > built-in defaults below.

#ifndef DIST_TRAIN_LIB_CONTRACT_OPTIONS_H_
#define DIST_TRAIN_LIB_CONTRACT_OPTIONS_H_

#include <signal.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "binding/bind_parts.h"
#include "contract/preflight_words.h"
#include "dist_train/status.h"
#include "relay/proctrack.h"
#include "relay/warning_signals.h"

namespace dist_train {

// How Slurm tasks map to training workers.
enum class Mode {
  kTask,  // each Slurm task is one worker (RANK, WORLD_SIZE, ...)
  kNode,  // one task per node runs a launcher (NNODES, NODE_RANK, PET_*)
};

// How MASTER_ADDR is spelled.
enum class AddrPolicy {
  kHostname,  // the first node's Slurm NodeName (+ master_addr_suffix)
  kNodeAddr,  // the first node's Slurm NodeAddr (looked up via libslurm)
};

// dt-preflight where `make install` puts it ($(bindir)/dt-preflight).
const char* DefaultPreflightProgram();

// Admin defaults from plugstack.conf, e.g.
//   required spank_dist_train.so port_range=20000-32767 mode=task
struct PluginConfig {
  // Ports for MASTER_PORT when the step has no SLURM_STEP_RESV_PORTS.
  // Keep it outside the kernel's ephemeral range (32768-60999 by default).
  uint16_t port_min = 20000;
  uint16_t port_max = 32767;
  // Mode when --dist-train gives none.
  Mode default_mode = Mode::kTask;
  AddrPolicy master_addr = AddrPolicy::kHostname;
  // Appended to the hostname for MASTER_ADDR (e.g. "-ib"); hostname policy
  // only.
  std::string master_addr_suffix;
  // Print the per-task wiring line to the job's stderr by default.
  bool verbose = false;
  // Set OMP_NUM_THREADS = CPUs per task (task mode) unless the user did.
  bool omp_num_threads = true;
  // Carry `#SBATCH --dist-train` / `salloc --dist-train` to every srun of
  // the job (via Slurm's SLURM_SPANK_* option variable).
  bool carry_to_steps = true;
  // Which parts of the topology binding apply by default (bind=...), and
  // how CPUs are shared (cpu_share=exclusive|domain).
  BindParts bind;
  // Use this saved hwloc XML instead of discovering the node ("" = discover).
  std::string topology;
  // Where slurmd (at start) saves the node's topology as XML so steps load
  // it fast; %h = hostname. "none" disables the cache.
  std::string topology_cache = "/run/dist-train/topology-%h.xml";
  // Also restrict NCCL to the planned HCA (NCCL_IB_HCA). Off by default:
  // NCCL pairs GPUs and NICs itself and uses several rails when it can.
  bool nccl_ib_hca = false;
  // Relay preemption warnings to every worker of a task (relay/signal_relay.h,
  // docs/preemption.md). Srun steps of --dist-train jobs only.
  bool signal_relay = true;
  // The cluster's ProctrackType; auto infers cgroup or pgid per task from
  // /proc/self/cgroup. linuxproc needs (and gets) no relay.
  Proctrack proctrack = Proctrack::kAuto;
  // Signals treated as a warning: delivered to every process that catches
  // them. A task's DT_PREEMPT_SIGNAL is added when it names one of these
  // kinds of signal.
  uint64_t warning_signals = SignalBit(SIGUSR1) | SignalBit(SIGUSR2);
  // The preflight gate (health/preflight.h) for srun steps of --dist-train
  // jobs: its time bound in seconds (preflight=off|SECONDS; 0 = off, the
  // default), its policy (preflight_policy=warn|fail|requeue) and the program
  // that runs it (preflight_program=PATH).
  uint32_t preflight_seconds = 0;
  PreflightPolicy preflight_policy = PreflightPolicy::kWarn;
  std::string preflight_program = DefaultPreflightProgram();
  // The site's floor under every node (preflight_min_cpu_gflops=RATE,
  // preflight_min_mem_gbps=RATE, preflight_min_link_mbps=N); none by
  // default. Jobs cannot change it.
  PreflightBaseline preflight_baseline;
};

// Parses plugstack.conf arguments. Unknown keys and bad values are errors;
// `out` is untouched on error.
Status ParsePluginConfig(int argc, const char* const* argv, PluginConfig* out);

// The hang watchdog's time bound (watchdog=SECONDS), exported to the
// tasks as DT_WATCHDOG and read by the runtime (runtime/watchdog.h); a
// user's own DT_WATCHDOG wins.
constexpr const char* kWatchdogVar = "DT_WATCHDOG";
constexpr uint64_t kWatchdogMinSeconds = 5;
constexpr uint64_t kWatchdogMaxSeconds = 86400;
// What the watchdog does after a hang (watchdog-policy=fail|requeue):
// exported as DT_WATCHDOG_POLICY=requeue when asked (fail: the default).
constexpr const char* kWatchdogPolicyVar = "DT_WATCHDOG_POLICY";
// What rank 0 does when a rank's machine stops answering
// (node-loss=fail|requeue, runtime/node_loss.h): exported as
// DT_NODE_LOSS=requeue when asked (fail: the default).
constexpr const char* kNodeLossVar = "DT_NODE_LOSS";

// The user's --dist-train words. Unset optionals mean "use the default".
struct JobOptions {
  bool enabled = true;                // false for --dist-train=off
  std::optional<Mode> mode;           // mode=task|node
  std::optional<uint32_t> nproc;      // nproc=N (node mode); unset = auto
  std::optional<bool> verbose;        // verbose / quiet
  std::optional<BindParts> bind;      // bind=all|none|cpu+gpu+nic (share unset)
  std::optional<CpuShare> cpu_share;  // cpu-share=exclusive|domain
  std::optional<uint32_t> preflight_seconds;  // preflight[=SECONDS|off], 0 off
  std::optional<PreflightPolicy> preflight_policy;  // preflight-policy=...
  std::optional<uint32_t> watchdog_seconds;  // watchdog=SECONDS|off, 0 off
  std::optional<bool> watchdog_requeue;      // watchdog-policy=fail|requeue
  std::optional<bool> node_loss_requeue;     // node-loss=fail|requeue
};

// The watchdog's variables the words ask for: DT_WATCHDOG=SECONDS and,
// with watchdog-policy=requeue, DT_WATCHDOG_POLICY=requeue; none when the
// watchdog is off.
EnvAssignments WatchdogVars(const JobOptions& opts);
// DT_NODE_LOSS=requeue with node-loss=requeue; else none.
EnvAssignments NodeLossVars(const JobOptions& opts);

// One --dist-train word. JobWords() is the only list of them: the parser,
// its messages and "did you mean" hints, FormatJobOptions, the `srun
// --help` text and the user guide (checked by a test) all come from it.
struct JobWord {
  const char* name;  // "mode"
  // The value after '=' as users see it; "" = a flag; "[...]": optional.
  const char* syntax;
  const char* help;     // one line for srun --help
  const char* example;  // value words: "mode=node", for "needs a value"
  const char* valid;    // value words: "task or node", for "bad value"
  const char* setting;  // what "given twice" names (verbose and quiet share)
  // Sets what the word configures (flags get ""); false: bad value.
  bool (*apply)(std::string_view value, JobOptions* opts);
  // The word as FormatJobOptions writes it, "" when not in effect; null for
  // on/off, which describe the whole option.
  std::string (*format)(const JobOptions& opts);
};

// Every word, in the order of the messages, the help and FormatJobOptions.
const std::vector<JobWord>& JobWords();

// The word as the help shows it: "mode=task|node", "verbose",
// "preflight[=SECONDS|off]".
std::string WordUsage(const JobWord& word);

// "on, off, mode=task|node, ...": each word with its value syntax.
std::string JobWordSyntax();

// The usage of --dist-train that `srun --help` prints (Slurm wraps it).
std::string OptionHelpText();

// The binding parts in force: job words over plugstack defaults.
BindParts EffectiveBind(const PluginConfig& cfg, const JobOptions& opts);

// The preflight gate in force for a step (off when seconds is 0).
struct PreflightSetting {
  uint32_t seconds = 0;
  PreflightPolicy policy = PreflightPolicy::kWarn;
  PreflightBaseline baseline;  // the site's, from plugstack.conf only
};
PreflightSetting EffectivePreflight(const PluginConfig& cfg,
                                    const JobOptions& opts);

// Parses the value of --dist-train. NULL, "" and "(null)" (how Slurm hands
// over a flag without value, depending on the path) mean "on".
Status ParseJobOptions(const char* text, JobOptions* out);

// Canonical spelling of `options` ("on" when all defaults), re-parseable by
// ParseJobOptions.
std::string FormatJobOptions(const JobOptions& options);

const char* ModeName(Mode mode);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_OPTIONS_H_
