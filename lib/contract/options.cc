// Copyright dist-train authors. SPDX-License-Identifier: MIT
// Over 400 lines: the word table of --dist-train and the plugstack key
// table, each one table on purpose (parser, help and docs read them).
#include "contract/options.h"

#include <cstring>
#include <set>
#include <vector>

#include "base/parse.h"

namespace dist_train {
namespace {

#ifndef DT_PREFLIGHT_PROGRAM  // the Makefile sets the installed path
#define DT_PREFLIGHT_PROGRAM "/usr/local/bin/dt-preflight"
#endif

constexpr uint32_t kMaxNproc = 1024;
constexpr uint64_t kMinPortRange = 64;
// Linux's default net.ipv4.ip_local_port_range.
constexpr uint64_t kEphemeralMin = 32768, kEphemeralMax = 60999;

bool ParseMode(std::string_view text, Mode* mode) {
  if (text == "task") return *mode = Mode::kTask, true;
  if (text == "node") return *mode = Mode::kNode, true;
  return false;
}

// "all", "none" or a '+' list of cpu, gpu, nic. The share is left as is.
bool ParseBindParts(std::string_view text, BindParts* out) {
  BindParts p = *out;
  p.cpu = p.gpu = p.nic = text == "all";
  if (text == "all" || text == "none") return *out = p, true;
  for (std::string_view part : Split(text, '+')) {
    bool* flag = part == "cpu"   ? &p.cpu
                 : part == "gpu" ? &p.gpu
                 : part == "nic" ? &p.nic
                                 : nullptr;
    if (flag == nullptr || *flag) return false;
    *flag = true;
  }
  *out = p;
  return true;
}

bool ParseShare(std::string_view text, CpuShare* out) {
  if (text == "exclusive") return *out = CpuShare::kExclusive, true;
  if (text == "domain") return *out = CpuShare::kDomain, true;
  return false;
}

std::string BindName(const BindParts& p) {
  if (p.cpu && p.gpu && p.nic) return "all";
  std::string out;
  for (auto [on, name] :
       {std::pair{p.cpu, "cpu"}, {p.gpu, "gpu"}, {p.nic, "nic"}}) {
    if (on) out += std::string(out.empty() ? "" : "+") + name;
  }
  return out.empty() ? "none" : out;
}

// ---- --dist-train words ------------------------------------------------

// The apply and format functions of JobWords(), one pair per word.
bool ApplyOn(std::string_view, JobOptions*) { return true; }
bool ApplyOff(std::string_view, JobOptions* o) {
  o->enabled = false;
  return true;
}
bool ApplyVerbose(std::string_view, JobOptions* o) {
  o->verbose = true;
  return true;
}
bool ApplyQuiet(std::string_view, JobOptions* o) {
  o->verbose = false;
  return true;
}

bool ApplyMode(std::string_view v, JobOptions* o) {
  Mode mode;
  if (!ParseMode(v, &mode)) return false;
  return o->mode = mode, true;
}

bool ApplyNproc(std::string_view v, JobOptions* o) {
  uint64_t n = 0;
  if (v == "auto") return o->nproc.reset(), true;
  if (!ParseUint(v, 1, kMaxNproc, &n)) return false;
  return o->nproc = static_cast<uint32_t>(n), true;
}

bool ApplyBind(std::string_view v, JobOptions* o) {
  BindParts parts;
  if (!ParseBindParts(v, &parts)) return false;
  return o->bind = parts, true;
}

bool ApplyShare(std::string_view v, JobOptions* o) {
  CpuShare share;
  if (!ParseShare(v, &share)) return false;
  return o->cpu_share = share, true;
}

bool ApplyWatchdog(std::string_view v, JobOptions* o) {
  uint64_t n = 0;
  if (v == "off") return o->watchdog_seconds = 0, true;
  if (!ParseUint(v, kWatchdogMinSeconds, kWatchdogMaxSeconds, &n)) return false;
  return o->watchdog_seconds = static_cast<uint32_t>(n), true;
}

std::string FormatWatchdog(const JobOptions& o) {
  if (!o.watchdog_seconds) return "";
  return *o.watchdog_seconds == 0
             ? "watchdog=off"
             : "watchdog=" + std::to_string(*o.watchdog_seconds);
}

}  // namespace

EnvAssignments WatchdogVars(const JobOptions& o) {
  EnvAssignments vars;
  if (o.watchdog_seconds.value_or(0) == 0) return vars;
  vars.emplace_back(kWatchdogVar, std::to_string(*o.watchdog_seconds));
  if (o.watchdog_requeue.value_or(false))
    vars.emplace_back(kWatchdogPolicyVar, "requeue");
  return vars;
}

EnvAssignments NodeLossVars(const JobOptions& o) {
  EnvAssignments vars;
  if (o.node_loss_requeue.value_or(false))
    vars.emplace_back(kNodeLossVar, "requeue");
  return vars;
}

namespace {

bool ApplyNodeLoss(std::string_view v, JobOptions* o) {
  if (v != "fail" && v != "requeue") return false;
  return o->node_loss_requeue = v == "requeue", true;
}

std::string FormatNodeLoss(const JobOptions& o) {
  if (!o.node_loss_requeue) return "";
  return *o.node_loss_requeue ? "node-loss=requeue" : "node-loss=fail";
}

bool ApplyWatchdogPolicy(std::string_view v, JobOptions* o) {
  if (v != "fail" && v != "requeue") return false;
  return o->watchdog_requeue = v == "requeue", true;
}

std::string FormatWatchdogPolicy(const JobOptions& o) {
  if (!o.watchdog_requeue) return "";
  return *o.watchdog_requeue ? "watchdog-policy=requeue"
                             : "watchdog-policy=fail";
}

std::string FormatMode(const JobOptions& o) {
  return o.mode ? std::string("mode=") + ModeName(*o.mode) : "";
}
std::string FormatNproc(const JobOptions& o) {
  return o.nproc ? "nproc=" + std::to_string(*o.nproc) : "";
}
std::string FormatBind(const JobOptions& o) {
  return o.bind ? "bind=" + BindName(*o.bind) : "";
}
std::string FormatShare(const JobOptions& o) {
  if (!o.cpu_share) return "";
  return *o.cpu_share == CpuShare::kDomain ? "cpu-share=domain"
                                           : "cpu-share=exclusive";
}
std::string FormatVerbose(const JobOptions& o) {
  return o.verbose.value_or(false) ? "verbose" : "";
}
std::string FormatQuiet(const JobOptions& o) {
  return o.verbose.value_or(true) ? "" : "quiet";
}

const JobWord* FindJobWord(std::string_view name) {
  for (const JobWord& w : JobWords()) {
    if (name == w.name) return &w;
  }
  return nullptr;
}

Status JobError(const std::string& what) {
  return Status::InvalidArgument("--dist-train: " + what);
}

Status UnknownWord(std::string_view word, std::string_view key) {
  std::vector<std::string> names;
  for (const JobWord& w : JobWords()) names.emplace_back(w.name);
  std::string msg = "unknown word '" + ShownValue(word) + "'";
  std::string nearest = NearestWord(key, names);
  if (!nearest.empty()) msg += " (did you mean '" + nearest + "'?)";
  return JobError(msg + "; valid words: " + JobWordSyntax());
}

// Applies one word; `key` is set to what it configures (for "given twice").
Status ApplyWord(std::string_view word, JobOptions* opts, std::string* key) {
  size_t eq = word.find('=');
  bool has_value = eq != std::string_view::npos;
  std::string_view name = word.substr(0, eq);
  std::string_view value = has_value ? word.substr(eq + 1) : "";
  const JobWord* w = FindJobWord(name);
  if (w == nullptr || (has_value && *w->syntax == '\0')) {
    return UnknownWord(word, name);
  }
  if (!has_value && *w->syntax != '\0' && *w->syntax != '[') {
    return JobError("'" + std::string(name) + "' needs a value, e.g. " +
                    w->example);
  }
  // An optional value is the bare word or a value, never "word=".
  bool empty_value = has_value && value.empty() && *w->syntax == '[';
  if (empty_value || !w->apply(value, opts)) {
    return JobError("bad value '" + ShownValue(value) + "' for '" + w->name +
                    "'; valid values: " + w->valid);
  }
  *key = w->setting;
  return Status::OK();
}

}  // namespace

const std::vector<JobWord>& JobWords() {
  static const std::vector<JobWord> words = {
      {"on", "", "enable with the site defaults (same as no value)", nullptr,
       nullptr, "on", ApplyOn, nullptr},
      {"off", "", "do not wire this step", nullptr, nullptr, "off", ApplyOff,
       nullptr},
      {"mode", "task|node",
       "each Slurm task is one worker, or one task per node runs a launcher",
       "mode=node", "task or node", "mode", ApplyMode, FormatMode},
      {"nproc", "N|auto",
       "workers per node announced in node mode (auto: the node's GPUs, "
       "else 1)",
       "nproc=8", "a number from 1 to 1024 or auto", "nproc", ApplyNproc,
       FormatNproc},
      {"bind", "all|none|cpu+gpu+nic",
       "which parts of the topology binding apply: CPU share, GPU, nearest NIC",
       "bind=cpu+nic",
       "all, none or a +-list of cpu, gpu, nic (e.g. bind=cpu+nic)", "bind",
       ApplyBind, FormatBind},
      {"cpu-share", "exclusive|domain",
       "disjoint whole-core shares of the GPU's CPUs, or all of them per rank",
       "cpu-share=domain", "exclusive or domain", "cpu-share", ApplyShare,
       FormatShare},
      {"preflight", "[SECONDS|off]",
       "check every node and the network before the program starts, in at "
       "most SECONDS (default 60)",
       "preflight=120", "a number of seconds from 5 to 3600 or off",
       "preflight", ApplyPreflightWord, FormatPreflightWord},
      {"preflight-policy", "warn|fail|requeue",
       "when preflight names a bad or slow node: report and go on, end the "
       "step, or end it and requeue the job without that node",
       "preflight-policy=fail", "warn, fail or requeue", "preflight-policy",
       ApplyPreflightPolicyWord, FormatPreflightPolicyWord},
      {"watchdog", "SECONDS|off",
       "when no rank progressed for SECONDS, dump every rank's stacks, name "
       "the ranks that hung and end the step (DT_WATCHDOG)",
       "watchdog=600", "a number of seconds from 5 to 86400 or off", "watchdog",
       ApplyWatchdog, FormatWatchdog},
      {"watchdog-policy", "fail|requeue",
       "after a hang: end the step, or end it and requeue the job without "
       "the nodes of the ranks that hung",
       "watchdog-policy=requeue", "fail or requeue", "watchdog-policy",
       ApplyWatchdogPolicy, FormatWatchdogPolicy},
      {"node-loss", "fail|requeue",
       "when a rank's machine stops answering (no TCP reply for 10 s): end "
       "the step, or end it and requeue the job without that node",
       "node-loss=requeue", "fail or requeue", "node-loss", ApplyNodeLoss,
       FormatNodeLoss},
      {"verbose", "", "print one wiring line per task to the job's stderr",
       nullptr, nullptr, "verbose/quiet", ApplyVerbose, FormatVerbose},
      {"quiet", "", "do not print it even if the site made verbose the default",
       nullptr, nullptr, "verbose/quiet", ApplyQuiet, FormatQuiet},
  };
  return words;
}

std::string WordUsage(const JobWord& w) {
  std::string out = w.name;
  if (*w.syntax == '[') return out + "[=" + (w.syntax + 1);
  if (*w.syntax != '\0') out += std::string("=") + w.syntax;
  return out;
}

std::string JobWordSyntax() {
  std::string out;
  for (const JobWord& w : JobWords())
    out += (out.empty() ? "" : ", ") + WordUsage(w);
  return out;
}

std::string OptionHelpText() {
  std::string out =
      "Wire tasks for distributed training (MASTER_ADDR/PORT, RANK, "
      "WORLD_SIZE, LOCAL_RANK, PET_*...). OPTIONS: comma-separated words:";
  const char* sep = " ";
  for (const JobWord& w : JobWords()) {
    out += sep + WordUsage(w) + ": " + w.help;
    sep = "; ";
  }
  return out + ". See dist-train's docs/user-guide.md.";
}

const char* ModeName(Mode mode) {
  return mode == Mode::kNode ? "node" : "task";
}

BindParts EffectiveBind(const PluginConfig& cfg, const JobOptions& opts) {
  BindParts parts = opts.bind.value_or(cfg.bind);
  parts.share = opts.cpu_share.value_or(cfg.bind.share);
  return parts;
}

PreflightSetting EffectivePreflight(const PluginConfig& cfg,
                                    const JobOptions& opts) {
  return {opts.preflight_seconds.value_or(cfg.preflight_seconds),
          opts.preflight_policy.value_or(cfg.preflight_policy),
          cfg.preflight_baseline};
}

const char* DefaultPreflightProgram() { return DT_PREFLIGHT_PROGRAM; }

Status ParseJobOptions(const char* text, JobOptions* out) {
  JobOptions opts;
  if (text == nullptr || *text == '\0' || std::strcmp(text, "(null)") == 0) {
    *out = opts;
    return Status::OK();
  }
  std::set<std::string> seen;
  size_t words = 0;
  for (std::string_view word : Split(text, ',')) {
    if (word.empty())
      return JobError("empty word in '" + ShownValue(text) + "'");
    std::string key;
    DT_RETURN_IF_ERROR(ApplyWord(word, &opts, &key));
    if (!seen.insert(key).second) return JobError("'" + key + "' given twice");
    ++words;
  }
  if (!opts.enabled && words > 1) {
    return JobError("'off' cannot be combined with other words in '" +
                    ShownValue(text) + "'");
  }
  *out = opts;
  return Status::OK();
}

// on/off describe the whole option; every other word formats itself.
std::string FormatJobOptions(const JobOptions& options) {
  if (!options.enabled) return "off";
  std::string out;
  for (const JobWord& w : JobWords()) {
    std::string word = w.format ? w.format(options) : "";
    if (!word.empty()) out += (out.empty() ? "" : ",") + word;
  }
  return out.empty() ? "on" : out;
}

// ---- plugstack.conf ----------------------------------------------------

namespace {

const std::vector<std::string>& ConfigKeys() {
  // clang-format off
  static const std::vector<std::string> keys = {
      "port_range", "mode", "master_addr", "master_addr_suffix", "verbose",
      "omp_num_threads", "carry_to_steps", "bind", "cpu_share", "topology",
      "topology_cache", "nccl_ib_hca", "signal_relay", "proctrack",
      "warning_signals", "preflight", "preflight_policy", "preflight_program",
      "preflight_min_cpu_gflops", "preflight_min_mem_gbps",
      "preflight_min_link_mbps"};
  // clang-format on
  return keys;
}

Status ConfigError(std::string_view arg, const std::string& what) {
  return Status::InvalidArgument("plugstack.conf: dist-train: argument '" +
                                 ShownValue(arg) + "': " + what);
}

Status ParsePortRange(std::string_view arg, std::string_view value,
                      PluginConfig* cfg) {
  size_t dash = value.find('-');
  uint64_t lo = 0, hi = 0;
  if (dash == std::string_view::npos ||
      !ParseUint(value.substr(0, dash), 1024, 65535, &lo) ||
      !ParseUint(value.substr(dash + 1), 1024, 65535, &hi) || lo > hi) {
    return ConfigError(arg,
                       "expected MIN-MAX with 1024 <= MIN <= MAX <= 65535");
  }
  if (hi - lo + 1 < kMinPortRange) {
    return ConfigError(arg, "range holds " + std::to_string(hi - lo + 1) +
                                " ports; at least " +
                                std::to_string(kMinPortRange) + " needed");
  }
  if (lo <= kEphemeralMax && hi >= kEphemeralMin) {
    return ConfigError(
        arg,
        "overlaps the kernel's ephemeral port range 32768-60999, "
        "where outgoing connections take ports at random");
  }
  cfg->port_min = static_cast<uint16_t>(lo);
  cfg->port_max = static_cast<uint16_t>(hi);
  return Status::OK();
}

bool ValidSuffix(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Status ParseBoolArg(std::string_view arg, std::string_view value, bool* out) {
  if (!ParseBool(value, out)) return ConfigError(arg, "expected yes or no");
  return Status::OK();
}

Status ParsePathArg(std::string_view arg, std::string_view value,
                    bool allow_none, std::string* out) {
  if (value.empty() || (value[0] != '/' && !(allow_none && value == "none"))) {
    return ConfigError(arg, std::string("expected an absolute path") +
                                (allow_none ? " or none" : ""));
  }
  *out = std::string(value);
  return Status::OK();
}

Status UnknownKey(std::string_view arg, std::string_view key) {
  std::string msg = "unknown key '" + ShownValue(key) + "'";
  std::string nearest = NearestWord(key, ConfigKeys());
  if (!nearest.empty()) msg += " (did you mean '" + nearest + "'?)";
  return ConfigError(arg,
                     msg + "; valid keys: " + JoinAlternatives(ConfigKeys()));
}

Status ApplyEnumArg(std::string_view arg, std::string_view key,
                    std::string_view value, PluginConfig* cfg) {
  if (key == "mode" && !ParseMode(value, &cfg->default_mode)) {
    return ConfigError(arg, "expected task or node");
  }
  if (key == "master_addr") {
    if (value == "hostname")
      return cfg->master_addr = AddrPolicy::kHostname, Status::OK();
    if (value == "nodeaddr")
      return cfg->master_addr = AddrPolicy::kNodeAddr, Status::OK();
    return ConfigError(arg, "expected hostname or nodeaddr");
  }
  if (key == "bind" && !ParseBindParts(value, &cfg->bind)) {
    return ConfigError(arg, "expected all, none or a +-list of cpu, gpu, nic");
  }
  if (key == "cpu_share" && !ParseShare(value, &cfg->bind.share)) {
    return ConfigError(arg, "expected exclusive or domain");
  }
  return Status::OK();
}

Status ApplyPreflightMinimumArg(std::string_view arg, std::string_view key,
                                std::string_view value, PluginConfig* cfg) {
  PreflightBaseline& b = cfg->preflight_baseline;
  if (key == "preflight_min_cpu_gflops" || key == "preflight_min_mem_gbps") {
    double* rate =
        key == "preflight_min_cpu_gflops" ? &b.cpu_gflops : &b.mem_gbps;
    if (!ParsePreflightRate(value, rate))
      return ConfigError(arg,
                         "expected a decimal number above 0 and at most "
                         "1000000, e.g. 2.5");
    return Status::OK();
  }
  if (key == "preflight_min_link_mbps") {
    uint64_t n = 0;
    if (!ParseUint(value, 1, kPreflightMaxLinkMbps, &n))
      return ConfigError(arg, "expected Mb/s from 1 to 10000000, e.g. 100000");
    return b.link_mbps = static_cast<uint32_t>(n), Status::OK();
  }
  return UnknownKey(arg, key);
}

Status ApplyPreflightArg(std::string_view arg, std::string_view key,
                         std::string_view value, PluginConfig* cfg) {
  if (key == "preflight") {
    // The bare word's default is a job's; a cluster names its seconds.
    if (value.empty() || !ParsePreflightSeconds(value, &cfg->preflight_seconds))
      return ConfigError(arg,
                         "expected off or a number of seconds from 5 to 3600");
    return Status::OK();
  }
  if (key == "preflight_policy") {
    if (!ParsePreflightPolicy(value, &cfg->preflight_policy))
      return ConfigError(arg, "expected warn, fail or requeue");
    return Status::OK();
  }
  if (key == "preflight_program")
    return ParsePathArg(arg, value, false, &cfg->preflight_program);
  return ApplyPreflightMinimumArg(arg, key, value, cfg);
}

Status ApplyConfigArg(std::string_view arg, std::string_view key,
                      std::string_view value, PluginConfig* cfg) {
  if (key == "port_range") return ParsePortRange(arg, value, cfg);
  if (key == "mode" || key == "master_addr" || key == "bind" ||
      key == "cpu_share") {
    return ApplyEnumArg(arg, key, value, cfg);
  }
  if (key == "master_addr_suffix") {
    if (!ValidSuffix(value)) {
      return ConfigError(arg, "expected 1-63 characters of A-Z a-z 0-9 . -");
    }
    return cfg->master_addr_suffix = std::string(value), Status::OK();
  }
  if (key == "verbose") return ParseBoolArg(arg, value, &cfg->verbose);
  if (key == "omp_num_threads")
    return ParseBoolArg(arg, value, &cfg->omp_num_threads);
  if (key == "carry_to_steps")
    return ParseBoolArg(arg, value, &cfg->carry_to_steps);
  if (key == "nccl_ib_hca") return ParseBoolArg(arg, value, &cfg->nccl_ib_hca);
  if (key == "signal_relay")
    return ParseBoolArg(arg, value, &cfg->signal_relay);
  if (key == "proctrack") {
    if (!ParseProctrack(value, &cfg->proctrack))
      return ConfigError(arg, "expected auto, cgroup, pgid or linuxproc");
    return Status::OK();
  }
  if (key == "warning_signals") {
    Status s = ParseWarningSignals(value, "", &cfg->warning_signals);
    return s.ok() ? s : ConfigError(arg, s.message());
  }
  if (key.rfind("preflight", 0) == 0)
    return ApplyPreflightArg(arg, key, value, cfg);
  if (key == "topology") return ParsePathArg(arg, value, false, &cfg->topology);
  if (key == "topology_cache") {
    return ParsePathArg(arg, value, true, &cfg->topology_cache);
  }
  return UnknownKey(arg, key);
}

}  // namespace

Status ParsePluginConfig(int argc, const char* const* argv, PluginConfig* out) {
  PluginConfig cfg;
  std::set<std::string> seen;
  for (int i = 0; i < argc; ++i) {
    std::string_view arg = argv[i] ? argv[i] : "";
    size_t eq = arg.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return ConfigError(arg, "expected key=value");
    }
    std::string key(arg.substr(0, eq));
    DT_RETURN_IF_ERROR(ApplyConfigArg(arg, key, arg.substr(eq + 1), &cfg));
    if (!seen.insert(key).second)
      return ConfigError(arg, "'" + key + "' given twice");
  }
  if (cfg.master_addr == AddrPolicy::kNodeAddr &&
      !cfg.master_addr_suffix.empty()) {
    return Status::InvalidArgument(
        "plugstack.conf: dist-train: master_addr_suffix applies to "
        "master_addr=hostname only, not nodeaddr");
  }
  *out = cfg;
  return Status::OK();
}

}  // namespace dist_train
