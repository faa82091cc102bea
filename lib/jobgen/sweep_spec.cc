// Copyright dist-train authors. SPDX-License-Identifier: MIT
// Over 400 lines: one table of sweep kinds and each kind's reader next to
// its row.
#include "jobgen/sweep_spec.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/parse.h"
#include "jobgen/reserved_vars.h"

namespace dist_train {
namespace {

struct SweepKind;

// Reads the value of one sweep kind's key (`path`, e.g. "sweep.grid").
using SweepKindParser = Status (*)(const SweepKind& kind, const YamlSource& src,
                                   const YAML::Node& node,
                                   const std::string& path, SweepSpec* out);

// One way of listing sweep points: a key under sweep:.
struct SweepKind {
  const char* name;
  // What its value holds, as messages say it ("name: [values]").
  const char* needs;
  // Points and random define whole points, so they cannot be crossed with
  // another kind; grid, zip and range combine into one product.
  bool stands_alone;
  SweepKindParser parse;
};

Status ValueList(const YamlSource& src, const YAML::Node& n,
                 const std::string& path, std::vector<std::string>* out) {
  DT_RETURN_IF_ERROR(ReadStringList(src, n, path, out));
  if (out->empty()) return YamlError(src, n, path, "the list is empty");
  return Status::OK();
}

Status NonEmptyMap(const YamlSource& src, const YAML::Node& n,
                   const std::string& path, const std::string& what) {
  if (!n.IsMap() || n.size() == 0) {
    return YamlError(
        src, n, path,
        "expected a non-empty mapping of " + what + ", got " +
            (n.IsMap() ? std::string("an empty one") : DescribeNode(n)));
  }
  return NoDuplicateKeys(src, n, path);
}

Status GridDims(const SweepKind& kind, const YamlSource& src,
                const YAML::Node& n, const std::string& path, SweepSpec* sw) {
  DT_RETURN_IF_ERROR(NonEmptyMap(src, n, path, kind.needs));
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name;
    std::vector<std::string> values;
    DT_RETURN_IF_ERROR(ReadVarName(src, it->first, path, &name));
    DT_RETURN_IF_ERROR(ValueList(src, it->second, path + "." + name, &values));
    SweepDimension d;
    d.names = {name};
    for (const std::string& v : values) d.values.push_back({v});
    sw->product.push_back(d);
  }
  return Status::OK();
}

Status ZipDim(const SweepKind& kind, const YamlSource& src, const YAML::Node& n,
              const std::string& path, SweepSpec* sw) {
  DT_RETURN_IF_ERROR(NonEmptyMap(src, n, path, kind.needs));
  SweepDimension d;
  size_t len = 0;
  std::string first;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name;
    std::vector<std::string> values;
    DT_RETURN_IF_ERROR(ReadVarName(src, it->first, path, &name));
    DT_RETURN_IF_ERROR(ValueList(src, it->second, path + "." + name, &values));
    if (d.names.empty()) {
      len = values.size(), first = name, d.values.resize(len);
    } else if (values.size() != len) {
      return YamlError(src, it->second, path + "." + name,
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

// One range parameter, `path` being e.g. "sweep.range.lr".
Status RangeDim(const YamlSource& src, const YAML::Node& n,
                const std::string& path, const std::string& name,
                SweepSpec* sw) {
  double start = 0, stop = 0, step = 1;
  bool has_stop = false;
  DT_RETURN_IF_ERROR(
      WalkMap(src, n, path,
              {{"start",
                [&](const YAML::Node& v, const std::string& p) {
                  return ReadNumber(src, v, p, &start);
                }},
               {"stop",
                [&](const YAML::Node& v, const std::string& p) {
                  has_stop = true;
                  return ReadNumber(src, v, p, &stop);
                }},
               {"step", [&](const YAML::Node& v, const std::string& p) {
                  return ReadNumber(src, v, p, &step);
                }}}));
  if (!has_stop) return YamlError(src, n, path, "needs 'stop' (exclusive)");
  SweepDimension d;
  d.names = {name};
  std::vector<std::string> values;
  Status st = RangeValues(start, stop, step, &values);
  if (!st.ok()) return YamlError(src, n, path, st.message());
  if (values.empty()) return YamlError(src, n, path, "the range is empty");
  for (const std::string& v : values) d.values.push_back({v});
  sw->product.push_back(d);
  return Status::OK();
}

Status RangeDims(const SweepKind& kind, const YamlSource& src,
                 const YAML::Node& n, const std::string& path, SweepSpec* sw) {
  DT_RETURN_IF_ERROR(NonEmptyMap(src, n, path, kind.needs));
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name;
    DT_RETURN_IF_ERROR(ReadVarName(src, it->first, path, &name));
    DT_RETURN_IF_ERROR(RangeDim(src, it->second, path + "." + name, name, sw));
  }
  return Status::OK();
}

Status Points(const SweepKind& kind, const YamlSource& src, const YAML::Node& n,
              const std::string& path, SweepSpec* sw) {
  if (!n.IsSequence() || n.size() == 0) {
    return YamlError(
        src, n, path,
        "expected a non-empty list of mappings, got " + DescribeNode(n));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string pi = path + "[" + std::to_string(i) + "]";
    DT_RETURN_IF_ERROR(NonEmptyMap(src, n[i], pi, kind.needs));
    SweepPoint point;
    for (auto it = n[i].begin(); it != n[i].end(); ++it) {
      std::string name, value;
      DT_RETURN_IF_ERROR(ReadVarName(src, it->first, pi, &name));
      DT_RETURN_IF_ERROR(ReadString(src, it->second, pi + "." + name, &value));
      point.emplace_back(name, value);
    }
    std::vector<std::string> these;
    for (const auto& [k, v] : point) these.push_back(k);
    if (i == 0) names = these;
    if (these != names) {
      return YamlError(src, n[i], pi,
                       "has parameters " + JoinAlternatives(these) +
                           ", but the first point has " +
                           JoinAlternatives(names));
    }
    sw->points.push_back(point);
  }
  return Status::OK();
}

// Whole numbers a double holds exactly: |x| <= 2^53 (checked before any
// conversion to int64_t, which is undefined out of its range).
bool ExactWholeNumber(double x) {
  constexpr double kLimit = 9007199254740992.0;  // 2^53
  return std::fabs(x) <= kLimit && x == std::floor(x);
}

// {int: [lo, hi]}: both whole numbers within +-2^53.
Status IntDistribution(const YamlSource& src, const YAML::Node& v,
                       const std::string& p, RandomParam* r) {
  double lo, hi;
  DT_RETURN_IF_ERROR(ReadNumber(src, v[0], p, &lo));
  DT_RETURN_IF_ERROR(ReadNumber(src, v[1], p, &hi));
  if (!ExactWholeNumber(lo) || !ExactWholeNumber(hi) || lo > hi)
    return YamlError(src, v, p,
                     "expected integers lo <= hi, each within +-2^53");
  r->kind = RandomParam::Kind::kInt, r->ilo = static_cast<int64_t>(lo),
  r->ihi = static_cast<int64_t>(hi);
  return Status::OK();
}

Status RandomParamSpec(const YamlSource& src, const YAML::Node& n,
                       const std::string& path, RandomParam* r) {
  if (!n.IsMap() || n.size() != 1)
    return YamlError(
        src, n, path,
        "expected one of {uniform: [lo, hi]}, {loguniform: [lo, hi]}, "
        "{int: [lo, hi]}, {choice: [values]}");
  std::string kind = n.begin()->first.Scalar();
  YAML::Node v = n.begin()->second;
  std::string p = path + "." + kind;
  if (kind == "choice") {
    r->kind = RandomParam::Kind::kChoice;
    return ValueList(src, v, p, &r->choices);
  }
  if (!v.IsSequence() || v.size() != 2)
    return YamlError(src, v, p, "expected [lo, hi]");
  if (kind == "int") return IntDistribution(src, v, p, r);
  if (kind != "uniform" && kind != "loguniform")
    return YamlError(src, n, path,
                     "unknown distribution '" + kind +
                         "'; valid: uniform, loguniform, int or choice");
  DT_RETURN_IF_ERROR(ReadNumber(src, v[0], p, &r->lo));
  DT_RETURN_IF_ERROR(ReadNumber(src, v[1], p, &r->hi));
  r->kind = kind == "uniform" ? RandomParam::Kind::kUniform
                              : RandomParam::Kind::kLogUniform;
  if (!(r->lo < r->hi) || !std::isfinite(r->hi - r->lo) ||
      (kind == "loguniform" && r->lo <= 0))
    return YamlError(
        src, v, p,
        "expected lo < hi" +
            std::string(kind == "loguniform" ? " and lo > 0" : ""));
  return Status::OK();
}

Status RandomParams(const YamlSource& src, const YAML::Node& n,
                    const std::string& path, SweepSpec* sw) {
  if (!n.IsMap() || n.size() == 0)
    return YamlError(src, n, path, "expected a mapping of name: distribution");
  for (auto it = n.begin(); it != n.end(); ++it) {
    RandomParam r;
    DT_RETURN_IF_ERROR(ReadVarName(src, it->first, path, &r.name));
    DT_RETURN_IF_ERROR(
        RandomParamSpec(src, it->second, path + "." + r.name, &r));
    sw->random.push_back(r);
  }
  return Status::OK();
}

Status RandomSamples(const SweepKind& kind, const YamlSource& src,
                     const YAML::Node& n, const std::string& path,
                     SweepSpec* sw) {
  bool has_samples = false;
  DT_RETURN_IF_ERROR(
      WalkMap(src, n, path,
              {{"samples",
                [&](const YAML::Node& v, const std::string& p) {
                  has_samples = true;
                  return ReadUint(src, v, p, 1, kMaxSweepPoints, &sw->samples);
                }},
               {"seed",
                [&](const YAML::Node& v, const std::string& p) {
                  uint32_t seed = 0;
                  DT_RETURN_IF_ERROR(ReadUint(src, v, p, 0, UINT32_MAX, &seed));
                  sw->seed = seed;
                  sw->seed_given = true;
                  return Status::OK();
                }},
               {"params", [&](const YAML::Node& v, const std::string& p) {
                  return RandomParams(src, v, p, sw);
                }}}));
  if (!has_samples || sw->random.empty())
    return YamlError(src, n, path, std::string("needs ") + kind.needs);
  return Status::OK();
}

// Every sweep kind, in the order messages list them.
constexpr SweepKind kSweepKinds[] = {
    {"grid", "name: [values]", false, GridDims},
    {"zip", "name: [values]", false, ZipDim},
    {"range", "name: {start, stop, step}", false, RangeDims},
    {"points", "name: value", true, Points},
    {"random", "'samples' and 'params'", true, RandomSamples},
};

// "a, b and c".
std::string JoinAll(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size()) ? " and " : ", ";
    out += words[i];
  }
  return out;
}

std::vector<std::string> KindNames(bool stands_alone) {
  std::vector<std::string> names;
  for (const SweepKind& k : kSweepKinds) {
    if (k.stands_alone == stands_alone) names.push_back(k.name);
  }
  return names;
}

// `given`: the kinds the section holds, in document order.
Status CheckKindsGiven(const YamlSource& src, const YAML::Node& section,
                       const std::vector<const SweepKind*>& given) {
  bool alone = std::any_of(given.begin(), given.end(),
                           [](const SweepKind* k) { return k->stands_alone; });
  if (alone && given.size() > 1) {
    return YamlError(src, section, "sweep",
                     std::string("'") + given[0]->name + "' and '" +
                         given[1]->name + "' cannot be combined (" +
                         JoinAll(KindNames(true)) + " stand alone; " +
                         JoinAll(KindNames(false)) + " combine)");
  }
  if (given.empty()) {
    return YamlError(src, section, "sweep",
                     "needs one of " + JoinAlternatives(SweepKindNames()));
  }
  return Status::OK();
}

Status PassAsKey(const YamlSource& src, const YAML::Node& v,
                 const std::string& p, PassAs* out) {
  std::string how;
  DT_RETURN_IF_ERROR(ReadString(src, v, p, &how));
  if (how == "env") return *out = PassAs::kEnv, Status::OK();
  if (how == "args") return *out = PassAs::kArgs, Status::OK();
  if (how == "both") return *out = PassAs::kBoth, Status::OK();
  return YamlError(src, v, p, "expected env, args or both, got '" + how + "'");
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos;
       pos = s.find(what, pos + what.size()))
    ++n;
  return n;
}

// Every point repeats the format once per parameter, so it stays short and
// holds each placeholder once: a value is never multiplied.
Status CheckArgFormat(const YamlSource& src, const YAML::Node& v,
                      const std::string& p, const std::string& format) {
  constexpr size_t kMaxArgFormat = 256;
  if (Count(format, "{value}") != 1 || Count(format, "{name}") > 1)
    return YamlError(src, v, p,
                     "must contain {value} once and {name} at most once");
  if (format.size() > kMaxArgFormat)
    return YamlError(src, v, p,
                     "is " + std::to_string(format.size()) +
                         " bytes long; the limit is " +
                         std::to_string(kMaxArgFormat));
  return Status::OK();
}

// The keys after the kinds: how the points reach the job.
void AddSweepOptions(const YamlSource& src, JobSpec* s, KeyTable* table) {
  table->emplace_back("parallel", UintKey(src, 1, 100000, &s->parallel));
  table->emplace_back("pass_as",
                      [&src, s](const YAML::Node& v, const std::string& p) {
                        return PassAsKey(src, v, p, &s->pass_as);
                      });
  table->emplace_back(
      "arg_format", [&src, s](const YAML::Node& v, const std::string& p) {
        DT_RETURN_IF_ERROR(ReadString(src, v, p, &s->arg_format));
        return CheckArgFormat(src, v, p, s->arg_format);
      });
  table->emplace_back("max_array_size",
                      UintKey(src, 1, 4000001, &s->max_array_size));
  table->emplace_back("run_dir", StringKey(src, &s->run_dir));
  table->emplace_back(
      "workdir", [&src, s](const YAML::Node& v, const std::string& p) {
        std::string w;
        DT_RETURN_IF_ERROR(ReadString(src, v, p, &w));
        if (w != "run" && w != "submit")
          return YamlError(src, v, p,
                           "expected run (the point's run directory) or "
                           "submit (where sbatch ran), got '" +
                               ShownValue(w) + "'");
        s->workdir_run = w == "run";
        return Status::OK();
      });
}

}  // namespace

Status ParseSweepSection(const YamlSource& src, const YAML::Node& section,
                         JobSpec* spec) {
  if (!section || section.IsNull()) return Status::OK();
  spec->has_sweep = true;
  std::vector<const SweepKind*> given;
  KeyTable table;
  for (const SweepKind& kind : kSweepKinds) {
    table.emplace_back(
        kind.name,
        [&src, &given, &kind, spec](const YAML::Node& v, const std::string& p) {
          given.push_back(&kind);
          return kind.parse(kind, src, v, p, &spec->sweep);
        });
  }
  AddSweepOptions(src, spec, &table);
  DT_RETURN_IF_ERROR(WalkMap(src, section, "sweep", table));
  return CheckKindsGiven(src, section, given);
}

Status CheckSweepNames(const YamlSource& src, const YAML::Node& section,
                       const SweepSpec& sweep) {
  std::vector<std::string> names;
  for (const SweepDimension& d : sweep.product)
    names.insert(names.end(), d.names.begin(), d.names.end());
  if (!sweep.points.empty()) {
    for (const auto& [name, value] : sweep.points[0]) names.push_back(name);
  }
  for (const RandomParam& r : sweep.random) names.push_back(r.name);
  std::set<std::string> seen;
  static const std::set<std::string> kShell = {"PATH",  "HOME", "IFS", "PWD",
                                               "SHELL", "USER", "LANG"};
  for (const std::string& n : names) {
    if (!seen.insert(n).second) {
      return YamlError(src, section, "sweep",
                       "parameter '" + n + "' is defined twice");
    }
    std::string why =
        kShell.count(n) ? "the shell's own" : ReservedVarReason(n);
    if (!why.empty()) {
      return YamlError(src, section, "sweep",
                       "parameter name '" + n + "' is reserved: " + why);
    }
  }
  return Status::OK();
}

std::vector<std::string> SweepKindNames() {
  std::vector<std::string> names;
  for (const SweepKind& k : kSweepKinds) names.push_back(k.name);
  return names;
}

}  // namespace dist_train
