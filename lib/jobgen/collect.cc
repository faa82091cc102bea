// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/collect.h"

#include <algorithm>
#include <set>

#include "base/parse.h"
#include "jobgen/text_table.h"

namespace dist_train {
namespace {

Status ParseJson(std::string_view text, const std::string& what, Json* out) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument(what + ": not JSON");
  *out = std::move(j);
  return Status::OK();
}

// A cell: strings as they are, anything else as compact JSON.
std::string Cell(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

struct Columns {
  std::vector<std::string> params, metrics;  // keys, in first-seen order
  std::vector<std::string> head;             // index, state, params, metrics
};

void AddKeys(const Json& object, std::vector<std::string>* keys) {
  for (const auto& item : object.items()) {
    if (std::find(keys->begin(), keys->end(), item.key()) == keys->end())
      keys->push_back(item.key());
  }
}

Columns ColumnsOf(const std::vector<CollectedPoint>& points) {
  Columns c;
  for (const CollectedPoint& p : points) {
    AddKeys(p.params, &c.params);
    AddKeys(p.metrics, &c.metrics);
  }
  c.head = {"index", "state"};
  c.head.insert(c.head.end(), c.params.begin(), c.params.end());
  for (const std::string& m : c.metrics) {
    bool clash =
        std::find(c.params.begin(), c.params.end(), m) != c.params.end() ||
        m == "index" || m == "state";
    c.head.push_back(clash ? "metric:" + m : m);
  }
  return c;
}

std::vector<std::string> Row(const CollectedPoint& p, const Columns& c) {
  std::vector<std::string> r = {std::to_string(p.index), PointState(p)};
  for (const std::string& k : c.params)
    r.push_back(p.params.contains(k) ? Cell(p.params[k]) : "");
  for (const std::string& k : c.metrics)
    r.push_back(p.metrics.contains(k) ? Cell(p.metrics[k]) : "");
  return r;
}

std::string AsJson(const std::vector<CollectedPoint>& points) {
  Json all = Json::array();
  for (const CollectedPoint& p : points) {
    Json j;
    j["index"] = p.index;
    j["state"] = PointState(p);
    j["slurm_state"] = p.slurm_state;
    j["params"] = p.params;
    j["metrics"] = p.metrics;
    all.push_back(j);
  }
  return all.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string FormatManifest(const SweepManifest& m) {
  Json j;
  j["array_job_id"] = m.array_job_id;
  j["first"] = m.first;
  j["points"] = m.points;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status ParseManifest(std::string_view text, const std::string& what,
                     SweepManifest* m) {
  Json j;
  DT_RETURN_IF_ERROR(ParseJson(text, what, &j));
  auto bad = [&what](const std::string& why) {
    return Status::InvalidArgument(what + ": " + why);
  };
  if (!j.is_object() || j.size() != 3 || !j.contains("array_job_id") ||
      !j.contains("first") || !j.contains("points")) {
    return bad("expected an object with array_job_id, first and points");
  }
  const Json &id = j["array_job_id"], &first = j["first"], &pts = j["points"];
  if (!id.is_number_unsigned() || id.get<uint64_t>() == 0 ||
      id.get<uint64_t>() > UINT32_MAX)
    return bad("array_job_id is not a job id");
  if (!first.is_number_unsigned() || first.get<uint64_t>() > UINT32_MAX)
    return bad("first is not a point index");
  if (!pts.is_array()) return bad("points is not a list");
  SweepManifest r;
  for (const Json& p : pts) {
    if (!p.is_object()) return bad("a point is not an object");
    r.points.push_back(p);
  }
  r.array_job_id = id.get<uint32_t>();
  r.first = first.get<size_t>();
  *m = std::move(r);
  return Status::OK();
}

Status ParseObjectFile(std::string_view text, const std::string& what,
                       Json* object) {
  Json j;
  DT_RETURN_IF_ERROR(ParseJson(text, what, &j));
  if (!j.is_object())
    return Status::InvalidArgument(what + ": expected a JSON object");
  *object = std::move(j);
  return Status::OK();
}

bool ArrayJobIdOfDir(std::string_view dir_name, uint32_t* id) {
  while (!dir_name.empty() && dir_name.back() == '/') dir_name.remove_suffix(1);
  size_t slash = dir_name.rfind('/');
  if (slash != std::string_view::npos) dir_name.remove_prefix(slash + 1);
  size_t dash = dir_name.rfind('-');
  uint64_t n = 0;
  if (dash == std::string_view::npos ||
      !ParseUint(dir_name.substr(dash + 1), 1, UINT32_MAX, &n))
    return false;
  *id = static_cast<uint32_t>(n);
  return true;
}

Status ParseArrayTasks(std::string_view expr, std::vector<uint32_t>* tasks) {
  auto bad = [expr] {
    return Status::InvalidArgument("array tasks '" + ShownValue(expr) +
                                   "' are not a task expression");
  };
  expr = expr.substr(0, expr.find('%'));  // "%N": how many at once
  std::vector<uint32_t> out;
  constexpr uint64_t kMaxTasks = 4000001;  // Slurm's MaxArraySize bound
  for (std::string_view part : Split(expr, ',')) {
    uint64_t lo = 0, hi = 0, step = 1;
    size_t colon = part.find(':');
    if (colon != std::string_view::npos) {
      if (!ParseUint(part.substr(colon + 1), 1, kMaxTasks, &step)) return bad();
      part = part.substr(0, colon);
    }
    size_t dash = part.find('-');
    if (!ParseUint(part.substr(0, dash), 0, kMaxTasks, &lo)) return bad();
    hi = lo;
    if (dash != std::string_view::npos &&
        (!ParseUint(part.substr(dash + 1), lo, kMaxTasks, &hi)))
      return bad();
    if (out.size() + (hi - lo) / step + 1 > kMaxTasks) return bad();
    for (uint64_t t = lo; t <= hi; t += step)
      out.push_back(static_cast<uint32_t>(t));
  }
  *tasks = std::move(out);
  return Status::OK();
}

std::string PointState(const CollectedPoint& p) {
  static const std::set<std::string> pending = {"PENDING", "REQUEUED"};
  static const std::set<std::string> running = {
      "RUNNING",  "SUSPENDED", "CONFIGURING", "COMPLETING",
      "RESIZING", "SIGNALING", "STAGE_OUT"};
  const std::string& s = p.slurm_state;
  if (s.empty()) return p.started ? "ended" : "unknown";
  if (pending.count(s)) return "pending";
  if (running.count(s)) return "running";
  if (s == "COMPLETED") return "done";
  return "failed:" + s;
}

std::string FormatCollected(const std::vector<CollectedPoint>& points,
                            CollectFormat format) {
  if (format == CollectFormat::kJson) return AsJson(points);
  Columns c = ColumnsOf(points);
  if (format == CollectFormat::kCsv) {
    std::string out = CsvRecord(c.head);
    for (const CollectedPoint& p : points) out += CsvRecord(Row(p, c));
    return out;
  }
  std::vector<std::vector<std::string>> rows = {c.head};
  for (const CollectedPoint& p : points) {
    std::vector<std::string> r = Row(p, c);
    for (std::string& cell : r) cell = ShownValue(cell);  // a terminal
    rows.push_back(r);
  }
  return AlignedTable(rows);
}

}  // namespace dist_train
