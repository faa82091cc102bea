// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/job_sections.h"

#include <cstdio>

#include <set>
#include <string_view>

#include "base/parse.h"
#include "contract/options.h"
#include "jobgen/reserved_vars.h"
#include "jobgen/shell_quote.h"
#include "jobgen/sweep_spec.h"

namespace dist_train {
namespace {

bool Digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         s.find_first_not_of("0123456789") == std::string_view::npos;
}

// sbatch --mem: a number with an optional K, M, G or T suffix.
bool ValidMem(const std::string& s) {
  std::string_view v = s;
  if (!v.empty() &&
      std::string_view("KMGTkmgt").find(v.back()) != std::string_view::npos)
    v.remove_suffix(1);
  return Digits(v);
}

// sbatch --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
bool ValidTime(const std::string& s) {
  if (s == "infinite" || s == "unlimited" || s == "UNLIMITED" ||
      s == "INFINITE")
    return true;
  std::string_view v = s;
  size_t dash = v.find('-');
  if (dash != std::string_view::npos) {
    if (!Digits(v.substr(0, dash))) return false;
    v = v.substr(dash + 1);
  }
  std::vector<std::string_view> parts = Split(v, ':');
  if (parts.size() > 3) return false;
  for (std::string_view p : parts)
    if (!Digits(p)) return false;
  return true;
}

// A value that becomes part of an #SBATCH line (sbatch, not the shell,
// parses those): no whitespace or quotes.
Status ReadSbatchValue(const YamlSource& c, const YAML::Node& n,
                       const std::string& path, std::string* out) {
  DT_RETURN_IF_ERROR(ReadString(c, n, path, out));
  if (out->empty() || out->find_first_of(" \t\r\n\"'\\") != std::string::npos) {
    return YamlError(c, n, path,
                     "'" + *out +
                         "' cannot be used in an #SBATCH line "
                         "(empty, or has whitespace, quotes or backslashes)");
  }
  return Status::OK();
}

KeyHandler SbatchKey(const YamlSource& c, std::string* out) {
  return [&c, out](const YAML::Node& v, const std::string& p) {
    return ReadSbatchValue(c, v, p, out);
  };
}

// An #SBATCH value with a format of its own; `is_not` completes the error
// "'VALUE' is not ...".
KeyHandler FormattedSbatchKey(const YamlSource& c, std::string* out,
                              bool (*valid)(const std::string&),
                              const char* is_not) {
  return [&c, out, valid, is_not](const YAML::Node& v, const std::string& p) {
    DT_RETURN_IF_ERROR(ReadSbatchValue(c, v, p, out));
    if (!valid(*out)) return YamlError(c, v, p, "'" + *out + "' is " + is_not);
    return Status::OK();
  };
}

// ---- sections ----------------------------------------------------------

Status JobSection(const YamlSource& c, const YAML::Node& n, JobSpec* s) {
  return WalkMap(
      c, n, "job",
      {{"name", SbatchKey(c, &s->name)},
       {"nodes", UintKey(c, 1, 100000, &s->nodes)},
       {"gpus_per_node", UintKey(c, 0, 1024, &s->gpus_per_node)},
       {"tasks_per_node", UintKey(c, 1, 4096, &s->tasks_per_node)},
       {"cpus_per_task", UintKey(c, 1, 4096, &s->cpus_per_task)},
       {"mem",
        FormattedSbatchKey(c, &s->mem, ValidMem,
                           "not a Slurm memory size like 64G, 500M or 0")},
       {"time", FormattedSbatchKey(c, &s->time, ValidTime,
                                   "not a Slurm time (minutes, MM:SS, "
                                   "HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or "
                                   "infinite)")},
       {"partition", SbatchKey(c, &s->partition)},
       {"account", SbatchKey(c, &s->account)},
       {"qos", SbatchKey(c, &s->qos)},
       {"constraint", SbatchKey(c, &s->constraint)},
       {"exclusive", BoolKey(c, &s->exclusive)},
       {"output", SbatchKey(c, &s->output)},
       {"error", SbatchKey(c, &s->error)}});
}

// The section's keys become --dist-train words, validated (and made
// canonical) by the plugin's own option parser so both agree.
Status DistTrainSection(const YamlSource& c, const YAML::Node& n, JobSpec* s) {
  std::vector<std::string> words;
  auto word = [&](const char* key) {
    return [&c, &words, key](const YAML::Node& v, const std::string& p) {
      std::string value;
      DT_RETURN_IF_ERROR(ReadString(c, v, p, &value));
      words.push_back(std::string(key) + "=" + value);
      return Status::OK();
    };
  };
  bool verbose = false;
  bool verbose_given = false;
  DT_RETURN_IF_ERROR(WalkMap(
      c, n, "dist_train",
      {{"enabled", BoolKey(c, &s->dist_train)},
       {"wiring",
        [&](const YAML::Node& v, const std::string& p) {
          std::string how;
          DT_RETURN_IF_ERROR(ReadString(c, v, p, &how));
          if (how != "plugin" && how != "wrapper")
            return YamlError(
                c, v, p,
                "expected plugin or wrapper, got '" + ShownValue(how) + "'");
          s->wrapper = how == "wrapper";
          return Status::OK();
        }},
       {"mode", word("mode")},
       {"nproc", word("nproc")},
       {"bind", word("bind")},
       {"cpu_share", word("cpu-share")},
       {"preflight", word("preflight")},
       {"preflight_policy", word("preflight-policy")},
       {"watchdog", word("watchdog")},
       {"watchdog_policy", word("watchdog-policy")},
       {"node_loss", word("node-loss")},
       {"verbose", [&](const YAML::Node& v, const std::string& p) {
          verbose_given = true;
          return ReadBool(c, v, p, &verbose);
        }}}));
  if (verbose_given) words.push_back(verbose ? "verbose" : "quiet");
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : ",") + w;
  JobOptions opts;
  Status st = ParseJobOptions(text.c_str(), &opts);
  if (!st.ok()) return YamlError(c, n, "dist_train", st.message());
  s->dist_train_options = text.empty() ? "" : FormatJobOptions(opts);
  return Status::OK();
}

Status LaunchStyleKey(const YamlSource& c, const YAML::Node& v,
                      const std::string& p, LaunchStyle* out) {
  std::string style;
  DT_RETURN_IF_ERROR(ReadString(c, v, p, &style));
  for (LaunchStyle l : {LaunchStyle::kSrun, LaunchStyle::kTorchrun,
                        LaunchStyle::kDtRun, LaunchStyle::kCustom}) {
    if (style == LaunchStyleName(l)) return *out = l, Status::OK();
  }
  return YamlError(
      c, v, p,
      "expected srun, torchrun, dt-run or custom, got '" + style + "'");
}

// The first control character of `word` as "byte 0x0a, a newline", or "".
std::string ControlCharacter(const std::string& word) {
  for (unsigned char ch : word) {
    if (ch >= 0x20 && ch != 0x7f) continue;
    char hex[8];
    snprintf(hex, sizeof(hex), "0x%02x", ch);
    const char* name = ch == '\n'   ? ", a newline"
                       : ch == '\t' ? ", a tab"
                       : ch == '\r' ? ", a carriage return"
                                    : "";
    return std::string("byte ") + hex + name;
  }
  return "";
}

// The program word names a program: a control character in it makes a
// script the shell reads as two commands (shellcheck SC2289). Every "${" of
// a command word starts a ${NAME} reference (or is "$${").
Status CheckCommandRefs(const YamlSource& c, const YAML::Node& list,
                        const std::string& path,
                        const std::vector<std::string>& words) {
  std::string control = words.empty() ? "" : ControlCharacter(words[0]);
  if (!control.empty()) {
    return YamlError(c, list[0], path + "[0]",
                     "the program's name has a control character (" + control +
                         "); a program is named on one line");
  }
  for (size_t i = 0; i < words.size(); ++i) {
    std::string quoted, why;
    if (!QuoteWithRefs(words[i], &quoted, &why)) {
      return YamlError(c, list[i], path + "[" + std::to_string(i) + "]", why);
    }
  }
  return Status::OK();
}

Status LaunchSection(const YamlSource& c, const YAML::Node& n, JobSpec* s) {
  return WalkMap(c, n, "launch",
                 {{"style",
                   [&](const YAML::Node& v, const std::string& p) {
                     return LaunchStyleKey(c, v, p, &s->style);
                   }},
                  {"command",
                   [&](const YAML::Node& v, const std::string& p) {
                     // One string would have to be split like a shell does;
                     // words leave no doubt about quoting.
                     if (v.IsScalar())
                       return YamlError(
                           c, v, p,
                           "expected a list of words, e.g. [python, "
                           "train.py, --lr, '0.1']");
                     DT_RETURN_IF_ERROR(ReadStringList(c, v, p, &s->command));
                     return CheckCommandRefs(c, v, p, s->command);
                   }},
                  {"srun_args", StringListKey(c, &s->srun_args)},
                  {"launcher",
                   [&](const YAML::Node& v, const std::string& p) {
                     if (v.IsScalar())
                       return YamlError(c, v, p,
                                        "expected a list of words, e.g. "
                                        "[python3, -m, torch.distributed.run]");
                     DT_RETURN_IF_ERROR(ReadStringList(c, v, p, &s->launcher));
                     if (s->launcher.empty())
                       return YamlError(c, v, p, "needs at least one word");
                     return Status::OK();
                   }},
                  {"nproc_per_node", UintKey(c, 1, 1024, &s->nproc_per_node)}});
}

Status EnvSection(const YamlSource& c, const YAML::Node& n, JobSpec* s) {
  if (!n || n.IsNull()) return Status::OK();
  if (!n.IsMap())
    return YamlError(
        c, n, "env",
        "expected a mapping of NAME: value, got " + DescribeNode(n));
  DT_RETURN_IF_ERROR(NoDuplicateKeys(c, n, "env"));
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name, value;
    DT_RETURN_IF_ERROR(ReadVarName(c, it->first, "env", &name));
    std::string why = ReservedVarReason(name);
    if (!why.empty()) {
      return YamlError(c, it->first, "env." + name,
                       "'" + name + "' is reserved: " + why);
    }
    DT_RETURN_IF_ERROR(ReadString(c, it->second, "env." + name, &value));
    s->env.emplace_back(name, value);
  }
  return Status::OK();
}

Status ContainerSection(const YamlSource& c, const YAML::Node& n, JobSpec* s) {
  return WalkMap(c, n, "container",
                 {{"image", StringKey(c, &s->container_image)},
                  {"mounts", StringListKey(c, &s->container_mounts)},
                  {"workdir", StringKey(c, &s->container_workdir)}});
}

Status SignalKey(const YamlSource& c, const YAML::Node& v, const std::string& p,
                 std::string* out) {
  DT_RETURN_IF_ERROR(ReadSbatchValue(c, v, p, out));
  static const std::set<std::string> kSignals = {"USR1", "USR2", "TERM",
                                                 "INT",  "HUP",  "URG"};
  if (!kSignals.count(*out))
    return YamlError(
        c, v, p,
        "expected USR1, USR2, TERM, INT, HUP or URG, got '" + *out + "'");
  return Status::OK();
}

Status PreemptionSection(const YamlSource& c, const YAML::Node& n, JobSpec* s) {
  return WalkMap(c, n, "preemption",
                 {{"signal",
                   [&](const YAML::Node& v, const std::string& p) {
                     return SignalKey(c, v, p, &s->signal);
                   }},
                  {"seconds_before", UintKey(c, 1, 65535, &s->signal_seconds)},
                  {"requeue", BoolKey(c, &s->requeue)},
                  {"max_requeues", UintKey(c, 1, 1000000, &s->max_requeues)},
                  {"checkpoint_dir", StringKey(c, &s->checkpoint_dir)}});
}

Status DependencySection(const YamlSource& c, const YAML::Node& n, JobSpec* s) {
  if (!n || n.IsNull()) return Status::OK();
  std::vector<std::string> deps;
  if (n.IsScalar()) {
    deps.push_back(n.Scalar());
  } else {
    DT_RETURN_IF_ERROR(ReadStringList(c, n, "dependency", &deps));
  }
  for (const std::string& d : deps) {
    if (d.empty() || d.find_first_of(" \t\n\"'\\") != std::string::npos ||
        (d.find(':') == std::string::npos && d != "singleton")) {
      return YamlError(
          c, n, "dependency",
          "'" + d + "' is not a Slurm dependency like afterok:1234");
    }
  }
  s->dependencies = deps;
  return Status::OK();
}

}  // namespace

Status ReadJobSections(const YamlSource& c, const YAML::Node& root,
                       JobSpec* s) {
  if (!root.IsMap())
    return Status::InvalidArgument(
        c.file + ": expected a mapping at the top level, got " +
        DescribeNode(root));
  // Each handler reads a whole section; the path argument is the section's
  // own name, which the sections know.
  auto section =
      [&](Status (*read)(const YamlSource&, const YAML::Node&, JobSpec*)) {
        return [&c, s, read](const YAML::Node& v, const std::string&) {
          return read(c, v, s);
        };
      };
  return WalkMap(c, root, "",
                 {{"job", section(JobSection)},
                  {"dist_train", section(DistTrainSection)},
                  {"launch", section(LaunchSection)},
                  {"env", section(EnvSection)},
                  {"setup", StringListKey(c, &s->setup)},
                  {"container", section(ContainerSection)},
                  {"preemption", section(PreemptionSection)},
                  {"dependency", section(DependencySection)},
                  {"sweep", section(ParseSweepSection)}});
}

}  // namespace dist_train
