// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "options.h"

#include <cstring>
#include <vector>

#include "parse.h"

namespace dist_train {
namespace {

constexpr uint32_t kMaxNproc = 1024;
constexpr uint64_t kMinPortRange = 64;

const std::vector<std::string>& JobWordNames() {
  static const std::vector<std::string> names = {"on",    "off",     "mode",
                                                 "nproc", "verbose", "quiet"};
  return names;
}

const char kValidWords[] =
    "on, off, mode=task|node, nproc=N|auto, verbose, quiet";

bool ParseMode(std::string_view text, Mode* mode) {
  if (text == "task") return *mode = Mode::kTask, true;
  if (text == "node") return *mode = Mode::kNode, true;
  return false;
}

Status JobError(const std::string& what) {
  return Status::InvalidArgument("--dist-train: " + what);
}

Status UnknownWord(std::string_view word, std::string_view key) {
  std::string msg = "unknown word '" + std::string(word) + "'";
  std::string nearest = NearestWord(key, JobWordNames());
  if (!nearest.empty()) msg += " (did you mean '" + nearest + "'?)";
  return JobError(msg + "; valid words: " + kValidWords);
}

template <typename T>
Status SetOnce(std::optional<T>* field, T value, std::string_view key) {
  if (field->has_value()) {
    return JobError("'" + std::string(key) + "' given twice");
  }
  *field = value;
  return Status::OK();
}

Status ApplyKeyValue(std::string_view word, std::string_view key,
                     std::string_view value, JobOptions* opts) {
  if (key == "mode") {
    Mode mode;
    if (!ParseMode(value, &mode)) {
      return JobError("bad value '" + std::string(value) +
                      "' for 'mode'; valid values: task or node");
    }
    return SetOnce(&opts->mode, mode, key);
  }
  if (key == "nproc") {
    uint64_t n = 0;
    if (value == "auto") return Status::OK();
    if (!ParseUint(value, 1, kMaxNproc, &n)) {
      return JobError("bad value '" + std::string(value) +
                      "' for 'nproc'; valid values: a number from 1 to " +
                      std::to_string(kMaxNproc) + " or auto");
    }
    return SetOnce(&opts->nproc, static_cast<uint32_t>(n), key);
  }
  return UnknownWord(word, key);
}

Status ApplyWord(std::string_view word, JobOptions* opts, bool* saw_off,
                 bool* saw_other) {
  size_t eq = word.find('=');
  if (eq != std::string_view::npos) {
    *saw_other = true;
    return ApplyKeyValue(word, word.substr(0, eq), word.substr(eq + 1), opts);
  }
  if (word == "off") return *saw_off = true, Status::OK();
  *saw_other = true;
  if (word == "on") return Status::OK();
  if (word == "verbose") return SetOnce(&opts->verbose, true, "verbose/quiet");
  if (word == "quiet") return SetOnce(&opts->verbose, false, "verbose/quiet");
  if (word == "mode" || word == "nproc") {
    return JobError("'" + std::string(word) + "' needs a value, e.g. " +
                    (word == "mode" ? "mode=node" : "nproc=8"));
  }
  return UnknownWord(word, word);
}

}  // namespace

const char* ModeName(Mode mode) {
  return mode == Mode::kNode ? "node" : "task";
}

Status ParseJobOptions(const char* text, JobOptions* out) {
  JobOptions opts;
  if (text == nullptr || *text == '\0' || std::strcmp(text, "(null)") == 0) {
    *out = opts;
    return Status::OK();
  }
  bool saw_off = false, saw_other = false;
  for (std::string_view word : Split(text, ',')) {
    if (word.empty()) {
      return JobError("empty word in '" + std::string(text) + "'");
    }
    DT_RETURN_IF_ERROR(ApplyWord(word, &opts, &saw_off, &saw_other));
  }
  if (saw_off && saw_other) {
    return JobError("'off' cannot be combined with other words in '" +
                    std::string(text) + "'");
  }
  opts.enabled = !saw_off;
  *out = opts;
  return Status::OK();
}

std::string FormatJobOptions(const JobOptions& options) {
  if (!options.enabled) return "off";
  std::string out;
  auto add = [&out](const std::string& word) {
    out += (out.empty() ? "" : ",") + word;
  };
  if (options.mode) add(std::string("mode=") + ModeName(*options.mode));
  if (options.nproc) add("nproc=" + std::to_string(*options.nproc));
  if (options.verbose) add(*options.verbose ? "verbose" : "quiet");
  return out.empty() ? "on" : out;
}

// ---- plugstack.conf ----------------------------------------------------

namespace {

const std::vector<std::string>& ConfigKeys() {
  static const std::vector<std::string> keys = {
      "port_range",         "mode",    "master_addr",
      "master_addr_suffix", "verbose", "omp_num_threads",
      "carry_to_steps"};
  return keys;
}

Status ConfigError(std::string_view arg, const std::string& what) {
  return Status::InvalidArgument("plugstack.conf: dist-train: argument '" +
                                 std::string(arg) + "': " + what);
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
  if (!ParseBool(value, out)) {
    return ConfigError(arg, "expected yes or no");
  }
  return Status::OK();
}

Status ApplyConfigArg(std::string_view arg, std::string_view key,
                      std::string_view value, PluginConfig* cfg) {
  if (key == "port_range") return ParsePortRange(arg, value, cfg);
  if (key == "mode") {
    if (!ParseMode(value, &cfg->default_mode)) {
      return ConfigError(arg, "expected task or node");
    }
    return Status::OK();
  }
  if (key == "master_addr") {
    if (value == "hostname")
      return cfg->master_addr = AddrPolicy::kHostname, Status::OK();
    if (value == "nodeaddr")
      return cfg->master_addr = AddrPolicy::kNodeAddr, Status::OK();
    return ConfigError(arg, "expected hostname or nodeaddr");
  }
  if (key == "master_addr_suffix") {
    if (!ValidSuffix(value)) {
      return ConfigError(arg, "expected 1-63 characters of A-Z a-z 0-9 . -");
    }
    cfg->master_addr_suffix = std::string(value);
    return Status::OK();
  }
  if (key == "verbose") return ParseBoolArg(arg, value, &cfg->verbose);
  if (key == "omp_num_threads")
    return ParseBoolArg(arg, value, &cfg->omp_num_threads);
  if (key == "carry_to_steps")
    return ParseBoolArg(arg, value, &cfg->carry_to_steps);
  std::string msg = "unknown key '" + std::string(key) + "'";
  std::string nearest = NearestWord(key, ConfigKeys());
  if (!nearest.empty()) msg += " (did you mean '" + nearest + "'?)";
  std::string valid = JoinAlternatives(ConfigKeys());
  return ConfigError(arg, msg + "; valid keys: " + valid);
}

}  // namespace

Status ParsePluginConfig(int argc, const char* const* argv, PluginConfig* out) {
  PluginConfig cfg;
  for (int i = 0; i < argc; ++i) {
    std::string_view arg = argv[i] ? argv[i] : "";
    size_t eq = arg.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return ConfigError(arg, "expected key=value");
    }
    DT_RETURN_IF_ERROR(
        ApplyConfigArg(arg, arg.substr(0, eq), arg.substr(eq + 1), &cfg));
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
