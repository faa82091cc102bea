// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/step_status.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/parse.h"
#include "runtime/checkpoint_files.h"
#include "runtime/step_timer.h"
#include "runtime/watchdog.h"

namespace dist_train {
namespace {

constexpr const char* kStragglerLine = "dist-train: straggler: rank ";
constexpr const char* kHangLine = "dist-train: watchdog: rank ";
constexpr size_t kMaxFile = 1 << 20;

std::string StepDirPrefix(const std::string& job) {
  return kWatchdogDirPrefix + job + ".";
}

// A step directory's suffix, "STEP" or "STEP.rN" (the Nth requeued run):
// runs in order, in each the numbered steps in order, then the others
// ("batch") by name.
struct StepKey {
  uint64_t run = 0, step = 0;
  bool numbered = false;
  std::string name;
};

StepKey KeyOf(const std::string& suffix) {
  StepKey k;
  k.name = suffix;
  size_t r = suffix.rfind(".r");
  if (r != std::string::npos &&
      ParseUint(suffix.substr(r + 2), 1, UINT32_MAX, &k.run))
    k.name = suffix.substr(0, r);
  k.numbered = ParseUint(k.name, 0, UINT32_MAX, &k.step);
  return k;
}

bool StepBefore(const std::string& a, const std::string& b) {
  StepKey x = KeyOf(a), y = KeyOf(b);
  if (x.run != y.run) return x.run < y.run;
  if (x.numbered != y.numbered) return x.numbered;
  return x.numbered ? x.step < y.step : x.name < y.name;
}

// A file of ours in the step directory; "" and OK when there is none.
Status ReadSmallFile(int dir_fd, const std::string& dir,
                     const std::string& name, std::string* text) {
  text->clear();
  Status s = ReadOwnFile(dir_fd, name, dir + "/" + name, kMaxFile, text);
  return s.code() == Status::Code::kNotFound ? Status::OK() : s;
}

bool IsLiveName(const std::string& name) {
  const std::string suffix = ".live";
  uint64_t rank;
  return name.size() > 5 + suffix.size() && name.compare(0, 5, "rank-") == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
             0 &&
         ParseUint(name.substr(5, name.size() - 5 - suffix.size()), 0, 1 << 24,
                   &rank);
}

std::string Fixed(double v, int digits) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

bool Ended(const StepStatus& s, const LiveRecord& r) {
  return r.ended || s.job_ended;
}

bool Stale(const StepStatus& s, const LiveRecord& r, int64_t now) {
  return !Ended(s, r) && now - r.updated > kStaleSeconds;
}

std::string Flags(const StepStatus& s, const LiveRecord& r,
                  const std::set<int>& stragglers, const std::set<int>& hung,
                  int64_t now) {
  std::vector<std::string> flags;
  if (stragglers.count(r.rank)) flags.push_back("straggler");
  if (hung.count(r.rank)) flags.push_back("hung");
  if (Ended(s, r)) flags.push_back("ended");
  if (Stale(s, r, now))
    flags.push_back("stale (no record for " + std::to_string(now - r.updated) +
                    " s)");
  std::string out;
  for (const std::string& f : flags) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// Seconds since the rank last progressed, as of now.
double ProgressAge(const LiveRecord& r, int64_t now) {
  return r.idle_seconds +
         static_cast<double>(std::max<int64_t>(now - r.updated, 0));
}

std::string Pad(const std::string& s, size_t width, bool right) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

Status FindStepDirs(const std::string& base, const std::string& job,
                    std::vector<std::string>* names) {
  names->clear();
  DIR* d = opendir(base.c_str());
  if (d == nullptr) return Errno("directory " + base);
  std::string prefix = StepDirPrefix(job);
  std::vector<std::string> steps;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0 &&
        name.size() > prefix.size())
      steps.push_back(name.substr(prefix.size()));
  }
  closedir(d);
  if (steps.empty()) {
    return Status::NotFound("no " + prefix + "* in " + base +
                            ": the job's steps have no watchdog "
                            "(--dist-train=watchdog=SECONDS), or their "
                            "DT_WATCHDOG_DIR is elsewhere (--dir)");
  }
  std::sort(steps.begin(), steps.end(), StepBefore);
  for (const std::string& s : steps) names->push_back(prefix + s);
  return Status::OK();
}

Status ReadStepStatus(const std::string& base, const std::string& name,
                      StepStatus* out) {
  *out = StepStatus{};
  out->dir = base + "/" + name;
  const std::string prefix = kWatchdogDirPrefix;
  size_t dot = name.find('.', prefix.size());  // job ids have no dot
  if (name.compare(0, prefix.size(), prefix) == 0 && dot != std::string::npos &&
      dot > prefix.size()) {
    out->job = name.substr(prefix.size(), dot - prefix.size());
    out->step = name.substr(dot + 1);
  }
  Fd base_fd, fd;
  base_fd.Reset(open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (base_fd.get() < 0) return Errno("directory " + base);
  DT_RETURN_IF_ERROR(OpenOwnDirectory(base_fd.get(), name, out->dir, &fd));
  DIR* d = fdopendir(dup(fd.get()));
  if (d == nullptr) return Errno(out->dir);
  std::vector<std::string> live;
  while (dirent* e = readdir(d))
    if (IsLiveName(e->d_name)) live.push_back(e->d_name);
  closedir(d);
  for (const std::string& f : live) {
    std::string text;
    LiveRecord r;
    Status s = ReadSmallFile(fd.get(), out->dir, f, &text);
    if (!s.ok())
      out->unreadable.push_back(s.message());
    else if (!text.empty() && DecodeLiveRecord(text, &r) &&
             LiveRecordName(r.rank) == f)
      out->ranks.push_back(r);
    else if (!text.empty())
      out->unreadable.push_back(out->dir + "/" + f + " is not a live record");
  }
  std::sort(
      out->ranks.begin(), out->ranks.end(),
      [](const LiveRecord& a, const LiveRecord& b) { return a.rank < b.rank; });
  DT_RETURN_IF_ERROR(
      ReadSmallFile(fd.get(), out->dir, "stragglers.txt", &out->stragglers));
  DT_RETURN_IF_ERROR(
      ReadSmallFile(fd.get(), out->dir, "summary.txt", &out->hang_summary));
  return ReadSmallFile(fd.get(), out->dir, "preflight.txt", &out->preflight);
}

std::set<int> NamedRanks(const std::string& lines, const std::string& after) {
  std::set<int> ranks;
  for (std::string_view line : Split(lines, '\n')) {
    if (line.compare(0, after.size(), after) != 0) continue;
    std::string_view rest = line.substr(after.size());
    size_t end = rest.find(' ');
    uint64_t rank;
    if (ParseUint(rest.substr(0, end), 0, 1 << 24, &rank))
      ranks.insert(static_cast<int>(rank));
  }
  return ranks;
}

std::string FormatStatusTable(const StepStatus& s, int64_t now) {
  std::set<int> stragglers = NamedRanks(s.stragglers, kStragglerLine);
  std::set<int> hung = NamedRanks(s.hang_summary, kHangLine);
  double watchdog = s.ranks.empty() ? 0 : s.ranks.front().watchdog_seconds;
  std::string out = "job " + s.job + ", step " + s.step + ": " +
                    std::to_string(s.ranks.size()) + " ranks, watchdog " +
                    Fixed(watchdog, 0) + " s (" + s.dir + ")\n";
  std::vector<std::vector<std::string>> rows = {{"RANK", "HOST", "PID", "STEPS",
                                                 "LAST PROGRESS", "STEP ms",
                                                 "COMPUTE ms", "FLAGS"}};
  for (const LiveRecord& r : s.ranks) {
    rows.push_back({std::to_string(r.rank), r.host, std::to_string(r.pid),
                    std::to_string(r.steps),
                    Fixed(ProgressAge(r, now), 1) + " s ago",
                    r.step_ms < 0 ? "-" : Fixed(r.step_ms, 1),
                    r.compute_ms < 0 ? "-" : Fixed(r.compute_ms, 1),
                    Flags(s, r, stragglers, hung, now)});
  }
  std::vector<size_t> width(rows[0].size());
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  const bool right[] = {true, false, true, true, false, true, true, false};
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      bool last = i + 1 == row.size();
      line += last ? row[i] : Pad(row[i], width[i], right[i]) + "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += s.stragglers + s.hang_summary + s.preflight;
  for (const std::string& u : s.unreadable) out += "dt-status: " + u + "\n";
  return out;
}

std::string FormatStatusJson(const StepStatus& s, int64_t now) {
  std::set<int> stragglers = NamedRanks(s.stragglers, kStragglerLine);
  std::set<int> hung = NamedRanks(s.hang_summary, kHangLine);
  nlohmann::json ranks = nlohmann::json::array();
  for (const LiveRecord& r : s.ranks) {
    nlohmann::json j = {{"rank", r.rank},
                        {"host", r.host},
                        {"pid", r.pid},
                        {"steps", r.steps},
                        {"collectives", r.collectives},
                        {"seconds_since_progress", ProgressAge(r, now)},
                        {"updated", r.updated},
                        {"straggler", stragglers.count(r.rank) > 0},
                        {"hung", hung.count(r.rank) > 0},
                        {"ended", Ended(s, r)},
                        {"stale", Stale(s, r, now)}};
    j["step_ms"] = r.step_ms < 0 ? nlohmann::json() : nlohmann::json(r.step_ms);
    j["compute_ms"] =
        r.compute_ms < 0 ? nlohmann::json() : nlohmann::json(r.compute_ms);
    ranks.push_back(j);
  }
  nlohmann::json out = {
      {"job", s.job},
      {"job_ended", s.job_ended},
      {"step", s.step},
      {"dir", s.dir},
      {"watchdog_seconds",
       s.ranks.empty() ? 0.0 : s.ranks.front().watchdog_seconds},
      {"ranks", ranks},
      {"straggler_lines", s.stragglers},
      {"hang_summary", s.hang_summary},
      {"preflight_report", s.preflight},
      {"unreadable", s.unreadable}};
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace dist_train
