// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "job_spec.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <functional>
#include <set>

#include "options.h"
#include "parse.h"

namespace dist_train {
namespace {

struct Ctx {
  std::string file;
  std::set<std::string> from_set;  // key paths given with --set
};

using Handler = std::function<Status(const YAML::Node&, const std::string&)>;
using Table = std::vector<std::pair<std::string, Handler>>;

std::string Where(const Ctx& c, const YAML::Node& n, const std::string& path) {
  for (const std::string& s : c.from_set) {
    if (path == s || path.rfind(s + ".", 0) == 0) return "--set " + s;
  }
  YAML::Mark m = n.Mark();
  if (m.line < 0) return c.file;
  return c.file + ":" + std::to_string(m.line + 1) + ":" +
         std::to_string(m.column + 1);
}

Status Err(const Ctx& c, const YAML::Node& n, const std::string& path,
           const std::string& msg) {
  return Status::InvalidArgument(Where(c, n, path) + ": " + path + ": " + msg);
}

std::string Got(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

Status Str(const Ctx& c, const YAML::Node& n, const std::string& path,
           std::string* out) {
  if (!n.IsScalar()) return Err(c, n, path, "expected a string, got " + Got(n));
  if (n.Scalar().find('\0') != std::string::npos) {
    return Err(c, n, path, "contains a NUL character");
  }
  *out = n.Scalar();
  return Status::OK();
}

Status Uint(const Ctx& c, const YAML::Node& n, const std::string& path,
            uint64_t min, uint64_t max, uint32_t* out) {
  uint64_t v = 0;
  if (!n.IsScalar() || !ParseUint(n.Scalar(), min, max, &v)) {
    return Err(c, n, path,
               "expected an integer from " + std::to_string(min) + " to " +
                   std::to_string(max) + ", got " + Got(n));
  }
  *out = static_cast<uint32_t>(v);
  return Status::OK();
}

Status Bool(const Ctx& c, const YAML::Node& n, const std::string& path,
            bool* out) {
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  for (const char* t : {"true", "True", "TRUE", "yes"}) {
    if (s == t) return *out = true, Status::OK();
  }
  for (const char* f : {"false", "False", "FALSE", "no"}) {
    if (s == f) return *out = false, Status::OK();
  }
  return Err(c, n, path, "expected true or false, got " + Got(n));
}

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
    std::vector<std::string_view> parts = Split(v, ':');
    if (parts.size() > 3) return false;
    for (std::string_view p : parts)
      if (!Digits(p)) return false;
    return true;
  }
  std::vector<std::string_view> parts = Split(v, ':');
  if (parts.size() > 3) return false;
  for (std::string_view p : parts)
    if (!Digits(p)) return false;
  return true;
}

Status Number(const Ctx& c, const YAML::Node& n, const std::string& path,
              double* out) {
  if (n.IsScalar()) {
    char* end = nullptr;
    const std::string& s = n.Scalar();
    *out = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Status::OK();
  }
  return Err(c, n, path, "expected a number, got " + Got(n));
}

Status StrList(const Ctx& c, const YAML::Node& n, const std::string& path,
               std::vector<std::string>* out) {
  if (!n.IsSequence()) return Err(c, n, path, "expected a list, got " + Got(n));
  std::vector<std::string> v;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string s;
    DT_RETURN_IF_ERROR(Str(c, n[i], path + "[" + std::to_string(i) + "]", &s));
    v.push_back(s);
  }
  *out = v;
  return Status::OK();
}

// A value that becomes part of an #SBATCH line (sbatch, not the shell,
// parses those): no whitespace or quotes.
Status SbatchValue(const Ctx& c, const YAML::Node& n, const std::string& path,
                   std::string* out) {
  DT_RETURN_IF_ERROR(Str(c, n, path, out));
  if (out->empty() || out->find_first_of(" \t\r\n\"'\\") != std::string::npos) {
    return Err(c, n, path,
               "'" + *out +
                   "' cannot be used in an #SBATCH line "
                   "(empty, or has whitespace, quotes or backslashes)");
  }
  return Status::OK();
}

bool ValidName(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char ch : s) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
          (ch >= '0' && ch <= '9') || ch == '_'))
      return false;
  }
  return true;
}

Status Name(const Ctx& c, const YAML::Node& n, const std::string& path,
            std::string* out) {
  DT_RETURN_IF_ERROR(Str(c, n, path, out));
  if (!ValidName(*out)) {
    return Err(
        c, n, path,
        "'" + *out + "' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)");
  }
  return Status::OK();
}

std::vector<std::string> Keys(const Table& t) {
  std::vector<std::string> keys;
  for (const auto& [k, h] : t) keys.push_back(k);
  return keys;
}

// yaml-cpp keeps both entries of a repeated key; a silent "last wins" would
// hide typos, so a repeated key is an error.
Status NoDuplicateKeys(const Ctx& c, const YAML::Node& map,
                       const std::string& section) {
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
    if (!seen.insert(key).second) {
      return Err(c, it->first, section.empty() ? key : section + "." + key,
                 "given twice");
    }
  }
  return Status::OK();
}

Status Walk(const Ctx& c, const YAML::Node& map, const std::string& section,
            const Table& table) {
  if (!map || map.IsNull()) return Status::OK();
  if (!map.IsMap())
    return Err(c, map, section, "expected a mapping, got " + Got(map));
  DT_RETURN_IF_ERROR(NoDuplicateKeys(c, map, section));
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
    std::string path = section.empty() ? key : section + "." + key;
    auto h = std::find_if(table.begin(), table.end(),
                          [&](const auto& e) { return e.first == key; });
    if (h == table.end()) {
      std::string msg = "unknown key '" + key + "'";
      std::string near = NearestWord(key, Keys(table));
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      msg += "; valid keys: " + JoinAlternatives(Keys(table));
      return Status::InvalidArgument(
          Where(c, it->first, path) + ": " +
          (section.empty() ? std::string("top level") : section) + ": " + msg);
    }
    DT_RETURN_IF_ERROR(h->second(it->second, path));
  }
  return Status::OK();
}

// ---- sections ----------------------------------------------------------

Status JobSection(const Ctx& c, const YAML::Node& n, JobSpec* s) {
  auto sb = [&](std::string* f) {
    return [&c, f](const YAML::Node& v, const std::string& p) {
      return SbatchValue(c, v, p, f);
    };
  };
  return Walk(
      c, n, "job",
      {{"name", sb(&s->name)},
       {"nodes",
        [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 1, 100000, &s->nodes);
        }},
       {"gpus_per_node",
        [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 0, 1024, &s->gpus_per_node);
        }},
       {"tasks_per_node",
        [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 1, 4096, &s->tasks_per_node);
        }},
       {"cpus_per_task",
        [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 1, 4096, &s->cpus_per_task);
        }},
       {"mem",
        [&](const YAML::Node& v, const std::string& p) {
          DT_RETURN_IF_ERROR(SbatchValue(c, v, p, &s->mem));
          if (!ValidMem(s->mem))
            return Err(c, v, p,
                       "'" + s->mem +
                           "' is not a Slurm memory size like 64G, 500M or 0");
          return Status::OK();
        }},
       {"time",
        [&](const YAML::Node& v, const std::string& p) {
          DT_RETURN_IF_ERROR(SbatchValue(c, v, p, &s->time));
          if (!ValidTime(s->time)) {
            return Err(c, v, p,
                       "'" + s->time +
                           "' is not a Slurm time (minutes, MM:SS, HH:MM:SS, "
                           "D-HH, D-HH:MM, D-HH:MM:SS or infinite)");
          }
          return Status::OK();
        }},
       {"partition", sb(&s->partition)},
       {"account", sb(&s->account)},
       {"qos", sb(&s->qos)},
       {"constraint", sb(&s->constraint)},
       {"exclusive",
        [&](const YAML::Node& v, const std::string& p) {
          return Bool(c, v, p, &s->exclusive);
        }},
       {"output", sb(&s->output)},
       {"error", sb(&s->error)}});
}

Status DistTrainSection(const Ctx& c, const YAML::Node& n, JobSpec* s) {
  std::vector<std::string> words;
  auto word = [&](const char* key) {
    return [&c, &words, key](const YAML::Node& v, const std::string& p) {
      std::string value;
      DT_RETURN_IF_ERROR(Str(c, v, p, &value));
      words.push_back(std::string(key) + "=" + value);
      return Status::OK();
    };
  };
  bool verbose = false;
  bool verbose_given = false;
  DT_RETURN_IF_ERROR(
      Walk(c, n, "dist_train",
           {{"enabled",
             [&](const YAML::Node& v, const std::string& p) {
               return Bool(c, v, p, &s->dist_train);
             }},
            {"mode", word("mode")},
            {"nproc", word("nproc")},
            {"bind", word("bind")},
            {"cpu_share", word("cpu-share")},
            {"verbose", [&](const YAML::Node& v, const std::string& p) {
               verbose_given = true;
               return Bool(c, v, p, &verbose);
             }}}));
  if (verbose_given) words.push_back(verbose ? "verbose" : "quiet");
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : ",") + w;
  JobOptions opts;
  Status st = ParseJobOptions(text.c_str(), &opts);
  if (!st.ok()) return Err(c, n, "dist_train", st.message());
  s->dist_train_options = text.empty() ? "" : FormatJobOptions(opts);
  return Status::OK();
}

Status LaunchSection(const Ctx& c, const YAML::Node& n, JobSpec* s) {
  return Walk(
      c, n, "launch",
      {{"style",
        [&](const YAML::Node& v, const std::string& p) {
          std::string style;
          DT_RETURN_IF_ERROR(Str(c, v, p, &style));
          for (LaunchStyle l : {LaunchStyle::kSrun, LaunchStyle::kTorchrun,
                                LaunchStyle::kDtRun, LaunchStyle::kCustom}) {
            if (style == LaunchStyleName(l)) return s->style = l, Status::OK();
          }
          return Err(
              c, v, p,
              "expected srun, torchrun, dt-run or custom, got '" + style + "'");
        }},
       {"command",
        [&](const YAML::Node& v, const std::string& p) {
          if (v.IsScalar())
            return Err(c, v, p,
                       "expected a list of words, e.g. [python, train.py, "
                       "--lr, '0.1']");
          return StrList(c, v, p, &s->command);
        }},
       {"srun_args",
        [&](const YAML::Node& v, const std::string& p) {
          return StrList(c, v, p, &s->srun_args);
        }},
       {"nproc_per_node", [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 1, 1024, &s->nproc_per_node);
        }}});
}

Status EnvSection(const Ctx& c, const YAML::Node& n, JobSpec* s) {
  if (!n || n.IsNull()) return Status::OK();
  if (!n.IsMap())
    return Err(c, n, "env", "expected a mapping of NAME: value, got " + Got(n));
  DT_RETURN_IF_ERROR(NoDuplicateKeys(c, n, "env"));
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name, value;
    DT_RETURN_IF_ERROR(Name(c, it->first, "env", &name));
    DT_RETURN_IF_ERROR(Str(c, it->second, "env." + name, &value));
    s->env.emplace_back(name, value);
  }
  return Status::OK();
}

Status ContainerSection(const Ctx& c, const YAML::Node& n, JobSpec* s) {
  return Walk(c, n, "container",
              {{"image",
                [&](const YAML::Node& v, const std::string& p) {
                  return Str(c, v, p, &s->container_image);
                }},
               {"mounts",
                [&](const YAML::Node& v, const std::string& p) {
                  return StrList(c, v, p, &s->container_mounts);
                }},
               {"workdir", [&](const YAML::Node& v, const std::string& p) {
                  return Str(c, v, p, &s->container_workdir);
                }}});
}

Status PreemptionSection(const Ctx& c, const YAML::Node& n, JobSpec* s) {
  return Walk(
      c, n, "preemption",
      {{"signal",
        [&](const YAML::Node& v, const std::string& p) {
          DT_RETURN_IF_ERROR(SbatchValue(c, v, p, &s->signal));
          static const std::set<std::string> kSignals = {"USR1", "USR2", "TERM",
                                                         "INT",  "HUP",  "URG"};
          if (!kSignals.count(s->signal))
            return Err(c, v, p,
                       "expected USR1, USR2, TERM, INT, HUP or URG, got '" +
                           s->signal + "'");
          return Status::OK();
        }},
       {"seconds_before",
        [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 1, 65535, &s->signal_seconds);
        }},
       {"requeue",
        [&](const YAML::Node& v, const std::string& p) {
          return Bool(c, v, p, &s->requeue);
        }},
       {"max_requeues",
        [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 1, 1000000, &s->max_requeues);
        }},
       {"checkpoint_dir", [&](const YAML::Node& v, const std::string& p) {
          return Str(c, v, p, &s->checkpoint_dir);
        }}});
}

Status DependencySection(const Ctx& c, const YAML::Node& n, JobSpec* s) {
  if (!n || n.IsNull()) return Status::OK();
  std::vector<std::string> deps;
  if (n.IsScalar()) {
    deps.push_back(n.Scalar());
  } else {
    DT_RETURN_IF_ERROR(StrList(c, n, "dependency", &deps));
  }
  for (const std::string& d : deps) {
    if (d.empty() || d.find_first_of(" \t\n\"'\\") != std::string::npos ||
        (d.find(':') == std::string::npos && d != "singleton")) {
      return Err(c, n, "dependency",
                 "'" + d + "' is not a Slurm dependency like afterok:1234");
    }
  }
  s->dependencies = deps;
  return Status::OK();
}

// ---- sweep -------------------------------------------------------------

Status ValueList(const Ctx& c, const YAML::Node& n, const std::string& path,
                 std::vector<std::string>* out) {
  DT_RETURN_IF_ERROR(StrList(c, n, path, out));
  if (out->empty()) return Err(c, n, path, "the list is empty");
  return Status::OK();
}

Status NonEmptyMap(const Ctx& c, const YAML::Node& n, const std::string& path,
                   const std::string& what) {
  if (!n.IsMap() || n.size() == 0) {
    return Err(c, n, path,
               "expected a non-empty mapping of " + what + ", got " +
                   (n.IsMap() ? std::string("an empty one") : Got(n)));
  }
  return NoDuplicateKeys(c, n, path);
}

Status GridDims(const Ctx& c, const YAML::Node& n, const std::string& path,
                SweepSpec* sw) {
  DT_RETURN_IF_ERROR(NonEmptyMap(c, n, path, "name: [values]"));
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name;
    std::vector<std::string> values;
    DT_RETURN_IF_ERROR(Name(c, it->first, path, &name));
    DT_RETURN_IF_ERROR(ValueList(c, it->second, path + "." + name, &values));
    SweepDimension d;
    d.names = {name};
    for (const std::string& v : values) d.values.push_back({v});
    sw->product.push_back(d);
  }
  return Status::OK();
}

Status ZipDim(const Ctx& c, const YAML::Node& n, const std::string& path,
              SweepSpec* sw) {
  DT_RETURN_IF_ERROR(NonEmptyMap(c, n, path, "name: [values]"));
  SweepDimension d;
  size_t len = 0;
  std::string first;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name;
    std::vector<std::string> values;
    DT_RETURN_IF_ERROR(Name(c, it->first, path, &name));
    DT_RETURN_IF_ERROR(ValueList(c, it->second, path + "." + name, &values));
    if (d.names.empty()) {
      len = values.size(), first = name, d.values.resize(len);
    } else if (values.size() != len) {
      return Err(c, it->second, path + "." + name,
                 "has " + std::to_string(values.size()) + " values but " +
                     path + "." + first + " has " + std::to_string(len) +
                     "; zipped lists must have equal lengths");
    }
    d.names.push_back(name);
    for (size_t i = 0; i < len; ++i) d.values[i].push_back(values[i]);
  }
  if (!d.names.empty()) sw->product.push_back(d);
  return Status::OK();
}

Status RangeDims(const Ctx& c, const YAML::Node& n, const std::string& path,
                 SweepSpec* sw) {
  DT_RETURN_IF_ERROR(NonEmptyMap(c, n, path, "name: {start, stop, step}"));
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name;
    DT_RETURN_IF_ERROR(Name(c, it->first, path, &name));
    std::string p = path + "." + name;
    double start = 0, stop = 0, step = 1;
    bool has_stop = false;
    DT_RETURN_IF_ERROR(
        Walk(c, it->second, p,
             {{"start",
               [&](const YAML::Node& v, const std::string& q) {
                 return Number(c, v, q, &start);
               }},
              {"stop",
               [&](const YAML::Node& v, const std::string& q) {
                 has_stop = true;
                 return Number(c, v, q, &stop);
               }},
              {"step", [&](const YAML::Node& v, const std::string& q) {
                 return Number(c, v, q, &step);
               }}}));
    if (!has_stop) return Err(c, it->second, p, "needs 'stop' (exclusive)");
    SweepDimension d;
    d.names = {name};
    std::vector<std::string> values;
    Status st = RangeValues(start, stop, step, &values);
    if (!st.ok()) return Err(c, it->second, p, st.message());
    if (values.empty()) return Err(c, it->second, p, "the range is empty");
    for (const std::string& v : values) d.values.push_back({v});
    sw->product.push_back(d);
  }
  return Status::OK();
}

Status Points(const Ctx& c, const YAML::Node& n, const std::string& path,
              SweepSpec* sw) {
  if (!n.IsSequence() || n.size() == 0)
    return Err(c, n, path,
               "expected a non-empty list of mappings, got " + Got(n));
  std::vector<std::string> names;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string pi = path + "[" + std::to_string(i) + "]";
    DT_RETURN_IF_ERROR(NonEmptyMap(c, n[i], pi, "name: value"));
    SweepPoint point;
    for (auto it = n[i].begin(); it != n[i].end(); ++it) {
      std::string name, value;
      DT_RETURN_IF_ERROR(Name(c, it->first, pi, &name));
      DT_RETURN_IF_ERROR(Str(c, it->second, pi + "." + name, &value));
      point.emplace_back(name, value);
    }
    std::vector<std::string> these;
    for (const auto& [k, v] : point) these.push_back(k);
    if (i == 0) names = these;
    if (these != names)
      return Err(c, n[i], pi,
                 "has parameters " + JoinAlternatives(these) +
                     ", but the first point has " + JoinAlternatives(names));
    sw->points.push_back(point);
  }
  return Status::OK();
}

Status RandomParamSpec(const Ctx& c, const YAML::Node& n,
                       const std::string& path, RandomParam* r) {
  if (!n.IsMap() || n.size() != 1)
    return Err(c, n, path,
               "expected one of {uniform: [lo, hi]}, {loguniform: [lo, hi]}, "
               "{int: [lo, hi]}, {choice: [values]}");
  std::string kind = n.begin()->first.Scalar();
  YAML::Node v = n.begin()->second;
  std::string p = path + "." + kind;
  if (kind == "choice") {
    r->kind = RandomParam::Kind::kChoice;
    return ValueList(c, v, p, &r->choices);
  }
  if (!v.IsSequence() || v.size() != 2)
    return Err(c, v, p, "expected [lo, hi]");
  if (kind == "int") {
    double lo, hi;
    DT_RETURN_IF_ERROR(Number(c, v[0], p, &lo));
    DT_RETURN_IF_ERROR(Number(c, v[1], p, &hi));
    if (lo != static_cast<int64_t>(lo) || hi != static_cast<int64_t>(hi) ||
        lo > hi)
      return Err(c, v, p, "expected integers lo <= hi");
    r->kind = RandomParam::Kind::kInt, r->ilo = static_cast<int64_t>(lo),
    r->ihi = static_cast<int64_t>(hi);
    return Status::OK();
  }
  if (kind != "uniform" && kind != "loguniform")
    return Err(c, n, path,
               "unknown distribution '" + kind +
                   "'; valid: uniform, loguniform, int or choice");
  DT_RETURN_IF_ERROR(Number(c, v[0], p, &r->lo));
  DT_RETURN_IF_ERROR(Number(c, v[1], p, &r->hi));
  r->kind = kind == "uniform" ? RandomParam::Kind::kUniform
                              : RandomParam::Kind::kLogUniform;
  if (!(r->lo < r->hi) || !std::isfinite(r->hi - r->lo) ||
      (kind == "loguniform" && r->lo <= 0))
    return Err(c, v, p,
               "expected lo < hi" +
                   std::string(kind == "loguniform" ? " and lo > 0" : ""));
  return Status::OK();
}

Status Random(const Ctx& c, const YAML::Node& n, const std::string& path,
              SweepSpec* sw) {
  bool has_samples = false;
  DT_RETURN_IF_ERROR(Walk(
      c, n, path,
      {{"samples",
        [&](const YAML::Node& v, const std::string& p) {
          has_samples = true;
          return Uint(c, v, p, 1, 10000000, &sw->samples);
        }},
       {"seed",
        [&](const YAML::Node& v, const std::string& p) {
          uint32_t seed = 0;
          DT_RETURN_IF_ERROR(Uint(c, v, p, 0, UINT32_MAX, &seed));
          sw->seed = seed;
          return Status::OK();
        }},
       {"params", [&](const YAML::Node& v, const std::string& p) {
          if (!v.IsMap() || v.size() == 0)
            return Err(c, v, p, "expected a mapping of name: distribution");
          for (auto it = v.begin(); it != v.end(); ++it) {
            RandomParam r;
            DT_RETURN_IF_ERROR(Name(c, it->first, p, &r.name));
            DT_RETURN_IF_ERROR(
                RandomParamSpec(c, it->second, p + "." + r.name, &r));
            sw->random.push_back(r);
          }
          return Status::OK();
        }}}));
  if (!has_samples || sw->random.empty())
    return Err(c, n, path, "needs 'samples' and 'params'");
  return Status::OK();
}

Status SweepSection(const Ctx& c, const YAML::Node& n, JobSpec* s) {
  if (!n || n.IsNull()) return Status::OK();
  s->has_sweep = true;
  std::vector<std::string> kinds;
  auto kind = [&](const char* k, auto fn) {
    return [&c, &kinds, s, k, fn](const YAML::Node& v, const std::string& p) {
      kinds.push_back(k);
      return fn(c, v, p, &s->sweep);
    };
  };
  DT_RETURN_IF_ERROR(Walk(
      c, n, "sweep",
      {{"grid", kind("grid", GridDims)},
       {"zip", kind("zip", ZipDim)},
       {"range", kind("range", RangeDims)},
       {"points", kind("points", Points)},
       {"random", kind("random", Random)},
       {"parallel",
        [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 1, 100000, &s->parallel);
        }},
       {"pass_as",
        [&](const YAML::Node& v, const std::string& p) {
          std::string how;
          DT_RETURN_IF_ERROR(Str(c, v, p, &how));
          if (how == "env") return s->pass_as = PassAs::kEnv, Status::OK();
          if (how == "args") return s->pass_as = PassAs::kArgs, Status::OK();
          if (how == "both") return s->pass_as = PassAs::kBoth, Status::OK();
          return Err(c, v, p, "expected env, args or both, got '" + how + "'");
        }},
       {"arg_format",
        [&](const YAML::Node& v, const std::string& p) {
          DT_RETURN_IF_ERROR(Str(c, v, p, &s->arg_format));
          if (s->arg_format.find("{value}") == std::string::npos)
            return Err(c, v, p, "must contain {value}");
          return Status::OK();
        }},
       {"max_array_size",
        [&](const YAML::Node& v, const std::string& p) {
          return Uint(c, v, p, 1, 4000001, &s->max_array_size);
        }},
       {"run_dir", [&](const YAML::Node& v, const std::string& p) {
          return Str(c, v, p, &s->run_dir);
        }}}));
  bool exclusive_kind = std::count(kinds.begin(), kinds.end(), "points") +
                            std::count(kinds.begin(), kinds.end(), "random") >
                        0;
  if (exclusive_kind && kinds.size() > 1) {
    return Err(c, n, "sweep",
               "'" + kinds[0] + "' and '" + kinds[1] +
                   "' cannot be combined (points and random stand alone; grid, "
                   "zip and range combine)");
  }
  if (kinds.empty())
    return Err(c, n, "sweep",
               "needs one of grid, zip, range, points or random");
  return Status::OK();
}

// ---- whole file --------------------------------------------------------

// Sweep parameters become shell variables: one name, once, and never one of
// the script's or Slurm's own.
Status CheckSweepNames(const Ctx& c, const YAML::Node& sweep,
                       const JobSpec& s) {
  std::vector<std::string> names;
  for (const SweepDimension& d : s.sweep.product)
    names.insert(names.end(), d.names.begin(), d.names.end());
  if (!s.sweep.points.empty()) {
    for (const auto& [name, value] : s.sweep.points[0]) names.push_back(name);
  }
  for (const RandomParam& r : s.sweep.random) names.push_back(r.name);
  std::set<std::string> seen;
  static const std::set<std::string> kReserved = {"PATH",  "HOME", "IFS", "PWD",
                                                  "SHELL", "USER", "LANG"};
  for (const std::string& n : names) {
    if (!seen.insert(n).second)
      return Err(c, sweep, "sweep", "parameter '" + n + "' is defined twice");
    if (kReserved.count(n) || n.rfind("dt_", 0) == 0 ||
        n.rfind("DT_", 0) == 0 || n.rfind("SLURM_", 0) == 0) {
      return Err(c, sweep, "sweep",
                 "parameter name '" + n +
                     "' is reserved (PATH, HOME, dt_*, DT_*, SLURM_* ...)");
    }
  }
  return Status::OK();
}

Status CheckCombinations(const Ctx& c, const YAML::Node& root, JobSpec* s) {
  YAML::Node job = root["job"], launch = root["launch"];
  bool per_gpu = s->style == LaunchStyle::kSrun;
  if (s->command.empty())
    return Err(c, launch ? launch : root, "launch.command",
               "is required (a list of words)");
  if (per_gpu && s->gpus_per_node > 0 && s->tasks_per_node > s->gpus_per_node) {
    return Err(c, job, "job.tasks_per_node",
               std::to_string(s->tasks_per_node) +
                   " tasks per node but job.gpus_per_node is " +
                   std::to_string(s->gpus_per_node) +
                   ": with launch.style srun each task drives one GPU");
  }
  if (!per_gpu && s->style != LaunchStyle::kCustom && s->tasks_per_node > 1) {
    return Err(c, job, "job.tasks_per_node",
               std::string("launch.style ") + LaunchStyleName(s->style) +
                   " runs one launcher per node, so tasks_per_node must be 1 "
                   "(workers come from launch.nproc_per_node)");
  }
  JobOptions opts;
  ParseJobOptions(s->dist_train_options.c_str(), &opts);
  Mode want = per_gpu ? Mode::kTask : Mode::kNode;
  if (s->style != LaunchStyle::kCustom && opts.mode && *opts.mode != want) {
    return Err(c, root["dist_train"], "dist_train.mode",
               std::string("mode ") + ModeName(*opts.mode) +
                   " does not fit launch.style " + LaunchStyleName(s->style) +
                   " (which needs mode " + ModeName(want) + ")");
  }
  if (s->style == LaunchStyle::kCustom &&
      (!s->srun_args.empty() || !s->container_image.empty())) {
    return Err(
        c, launch, "launch.style",
        "custom runs launch.command as given, so launch.srun_args and "
        "container cannot apply; put the srun options into launch.command");
  }
  if (s->max_requeues > 0 && !s->requeue)
    return Err(c, root["preemption"], "preemption.max_requeues",
               "needs preemption.requeue: true");
  if (!s->dist_train && !s->dist_train_options.empty())
    return Err(c, root["dist_train"], "dist_train",
               "options given but enabled is false");
  if (!s->dist_train && s->style != LaunchStyle::kSrun &&
      s->style != LaunchStyle::kCustom) {
    return Err(
        c, root["dist_train"], "dist_train.enabled",
        std::string("launch.style ") + LaunchStyleName(s->style) +
            " needs dist-train's node-mode variables; it cannot be false");
  }
  if (opts.nproc && (per_gpu || (s->nproc_per_node > 0 &&
                                 *opts.nproc != s->nproc_per_node))) {
    return Err(c, root["dist_train"], "dist_train.nproc",
               per_gpu ? std::string("applies to torchrun/dt-run only; with "
                                     "srun each task is one worker")
                       : "disagrees with launch.nproc_per_node; set only one");
  }
  return CheckSweepNames(c, root["sweep"], *s);
}

void ApplyDefaults(JobSpec* s) {
  if (s->tasks_per_node == 0) {
    s->tasks_per_node = (s->style == LaunchStyle::kSrun && s->gpus_per_node > 0)
                            ? s->gpus_per_node
                            : 1;
  }
  if (s->nproc_per_node == 0)
    s->nproc_per_node = s->gpus_per_node > 0 ? s->gpus_per_node : 1;
  if (s->output.empty())
    s->output = s->has_sweep ? "%x-%A_%a.out" : "%x-%j.out";
  if (s->dist_train && s->style != LaunchStyle::kSrun &&
      s->style != LaunchStyle::kCustom) {
    JobOptions opts;
    ParseJobOptions(s->dist_train_options.c_str(), &opts);
    opts.mode = Mode::kNode;
    if (!opts.nproc) opts.nproc = s->nproc_per_node;
    s->dist_train_options = FormatJobOptions(opts);
  }
}

Status Root(const Ctx& c, const YAML::Node& root, JobSpec* s) {
  if (!root.IsMap())
    return Status::InvalidArgument(
        c.file + ": expected a mapping at the top level, got " + Got(root));
  DT_RETURN_IF_ERROR(Walk(
      c, root, "",
      {{"job", [&](const YAML::Node& v,
                   const std::string&) { return JobSection(c, v, s); }},
       {"dist_train",
        [&](const YAML::Node& v, const std::string&) {
          return DistTrainSection(c, v, s);
        }},
       {"launch", [&](const YAML::Node& v,
                      const std::string&) { return LaunchSection(c, v, s); }},
       {"env", [&](const YAML::Node& v,
                   const std::string&) { return EnvSection(c, v, s); }},
       {"setup",
        [&](const YAML::Node& v, const std::string& p) {
          return StrList(c, v, p, &s->setup);
        }},
       {"container",
        [&](const YAML::Node& v, const std::string&) {
          return ContainerSection(c, v, s);
        }},
       {"preemption",
        [&](const YAML::Node& v, const std::string&) {
          return PreemptionSection(c, v, s);
        }},
       {"dependency",
        [&](const YAML::Node& v, const std::string&) {
          return DependencySection(c, v, s);
        }},
       {"sweep", [&](const YAML::Node& v, const std::string&) {
          return SweepSection(c, v, s);
        }}}));
  return CheckCombinations(c, root, s);
}

// "job.nodes=4": sets that key (creating mappings on the way) to the YAML
// value after '='.
Status ApplySet(const std::string& set, YAML::Node root, Ctx* c) {
  size_t eq = set.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("--set '" + set +
                                   "': expected key.path=value");
  }
  std::string path = set.substr(0, eq);
  std::vector<std::string_view> parts = Split(path, '.');
  YAML::Node value;
  try {
    value = YAML::Load(set.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("--set '" + set + "': " + e.msg);
  }
  std::vector<YAML::Node> chain = {root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = chain.back()[std::string(parts[i])];
    if (next && !next.IsMap() && !next.IsNull()) {
      return Status::InvalidArgument("--set '" + set +
                                     "': " + std::string(parts[i]) +
                                     " is not a mapping");
    }
    chain.push_back(next);
  }
  // Replace the entry (remove, then add) rather than assign through it: an
  // assignment would change every alias of an anchored value too.
  chain.back().remove(std::string(parts.back()));
  chain.back()[std::string(parts.back())] = value;
  c->from_set.insert(path);
  return Status::OK();
}

std::string Stem(const std::string& path) {
  std::string base = path.substr(
      path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

// A second YAML document would be ignored silently by a plain load.
YAML::Node SingleDocument(const std::vector<YAML::Node>& docs,
                          const std::string& file) {
  if (docs.size() > 1) {
    throw YAML::Exception(YAML::Mark::null_mark(),
                          file + " holds " + std::to_string(docs.size()) +
                              " YAML documents; gen-sbatch reads exactly one");
  }
  return docs.empty() ? YAML::Node() : docs[0];
}

Status Parse(const std::function<YAML::Node()>& load, const std::string& file,
             const std::vector<std::string>& sets, JobSpec* out) {
  Ctx c{file, {}};
  YAML::Node root;
  try {
    root = load();
  } catch (const YAML::BadFile&) {
    return Status::NotFound(file + ": cannot read the file");
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return Status::InvalidArgument(e.msg);
    return Status::InvalidArgument(
        file + ":" + std::to_string(e.mark.line + 1) + ":" +
        std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
  try {
    if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    for (const std::string& set : sets)
      DT_RETURN_IF_ERROR(ApplySet(set, root, &c));
    JobSpec s;
    s.source = file;
    s.name = Stem(file);
    DT_RETURN_IF_ERROR(Root(c, root, &s));
    if (s.name.empty() ||
        s.name.find_first_of(" \t\r\n\"'\\") != std::string::npos) {
      return Status::InvalidArgument(
          file + ": the file name gives the job name '" + s.name +
          "', which cannot be used in an #SBATCH line: set job.name");
    }
    ApplyDefaults(&s);
    *out = std::move(s);
    return Status::OK();
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(file + ": " + e.msg);
  }
}

}  // namespace

const char* LaunchStyleName(LaunchStyle style) {
  switch (style) {
    case LaunchStyle::kSrun:
      return "srun";
    case LaunchStyle::kTorchrun:
      return "torchrun";
    case LaunchStyle::kDtRun:
      return "dt-run";
    case LaunchStyle::kCustom:
      return "custom";
  }
  return "?";
}

Status LoadJobSpec(const std::string& path,
                   const std::vector<std::string>& sets, JobSpec* out) {
  return Parse(
      [&] { return SingleDocument(YAML::LoadAllFromFile(path), path); }, path,
      sets, out);
}

Status ParseJobSpec(const std::string& yaml, const std::string& name,
                    const std::vector<std::string>& sets, JobSpec* out) {
  return Parse([&] { return SingleDocument(YAML::LoadAll(yaml), name); }, name,
               sets, out);
}

}  // namespace dist_train
