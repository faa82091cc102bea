// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/step_stats.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/parse.h"

namespace dist_train {
namespace {

constexpr const char* kPrefix = "dist-train: straggler: ";
constexpr uint64_t kMaxMicros = uint64_t{1} << 50;

// Milliseconds as whole microseconds ("" for none: negative).
std::string Micros(double ms) {
  if (ms < 0) return "";
  return std::to_string(static_cast<uint64_t>(ms * 1000 + 0.5));
}

bool ReadMicros(const std::string& text, double* ms) {
  uint64_t us;
  if (text.empty()) return *ms = -1, true;
  if (!ParseUint(text, 0, kMaxMicros, &us)) return false;
  *ms = static_cast<double>(us) / 1000;
  return true;
}

std::string Ms(double ms) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f", ms);
  return buf;
}

std::string Who(const LiveRecord& r) {
  return "rank " + std::to_string(r.rank) + " on " + r.host + " (pid " +
         std::to_string(r.pid) + ")";
}

}  // namespace

bool MeasureWindow(const TimingSample& a, const TimingSample& b,
                   uint64_t min_steps, StepWindow* w) {
  if (b.steps < a.steps + std::max<uint64_t>(min_steps, 1) ||
      b.now_ns <= a.now_ns)
    return false;
  double steps = static_cast<double>(b.steps - a.steps);
  double wall = static_cast<double>(b.now_ns - a.now_ns);
  double compute;
  if (b.compute_ns > a.compute_ns) {
    compute = static_cast<double>(b.compute_ns - a.compute_ns);
  } else {
    double wait =
        b.wait_ns > a.wait_ns ? static_cast<double>(b.wait_ns - a.wait_ns) : 0;
    compute = std::max(wall - wait, 0.0);
  }
  w->steps = b.steps - a.steps;
  w->compute_ms = compute / steps / 1e6;
  w->step_ms = wall / steps / 1e6;
  return true;
}

std::string EncodeLiveRecord(const LiveRecord& r) {
  std::ostringstream o;
  o << "rank=" << r.rank << "\nhost=" << r.host << "\npid=" << r.pid
    << "\nsteps=" << r.steps << "\ncollectives=" << r.collectives
    << "\nwindows=" << r.windows << "\ncompute_us=" << Micros(r.compute_ms)
    << "\nstep_us=" << Micros(r.step_ms)
    << "\nidle_ms=" << Micros(r.idle_seconds)
    << "\nwatchdog=" << static_cast<uint64_t>(r.watchdog_seconds)
    << "\nupdated=" << r.updated << "\nended=" << (r.ended ? 1 : 0) << "\n";
  return o.str();
}

bool DecodeLiveRecord(const std::string& text, LiveRecord* out) {
  std::map<std::string, std::string> kv;
  if (!ParseKeyValueLines(text, &kv) || kv.size() != 12) return false;
  uint64_t rank, pid, steps, coll, windows, watchdog, updated, ended;
  auto num = [&](const char* key, uint64_t max, uint64_t* v) {
    auto it = kv.find(key);
    return it != kv.end() && ParseUint(it->second, 0, max, v);
  };
  LiveRecord r;
  bool ok =
      num("rank", 1 << 24, &rank) && num("pid", 1u << 30, &pid) &&
      num("steps", UINT64_MAX, &steps) &&
      num("collectives", UINT64_MAX, &coll) &&
      num("windows", UINT64_MAX, &windows) &&
      num("watchdog", 1u << 30, &watchdog) &&
      num("updated", uint64_t{1} << 40, &updated) && num("ended", 1, &ended) &&
      kv.count("host") && kv["host"].size() <= 255 && kv.count("compute_us") &&
      ReadMicros(kv["compute_us"], &r.compute_ms) && kv.count("step_us") &&
      ReadMicros(kv["step_us"], &r.step_ms) && kv.count("idle_ms") &&
      !kv["idle_ms"].empty() && ReadMicros(kv["idle_ms"], &r.idle_seconds);
  if (!ok) return false;
  r.rank = static_cast<int>(rank);
  r.host = kv["host"];
  r.pid = static_cast<int64_t>(pid);
  r.steps = steps;
  r.collectives = coll;
  r.windows = windows;
  r.watchdog_seconds = static_cast<double>(watchdog);
  r.updated = static_cast<int64_t>(updated);
  r.ended = ended == 1;
  *out = r;
  return true;
}

double OthersMedianMs(const std::vector<LiveRecord>& records, int rank) {
  std::vector<double> v;
  for (const LiveRecord& r : records)
    if (r.rank != rank && r.compute_ms >= 0 && !r.ended)
      v.push_back(r.compute_ms);
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

StragglerTracker::StragglerTracker(StragglerOptions options)
    : options_(options) {}

std::string StragglerTracker::Update(const std::vector<LiveRecord>& records) {
  std::string out;
  for (const LiveRecord& r : records) {
    RankState& st = state_[r.rank];
    if (r.windows == st.windows || r.compute_ms < 0 || r.ended) continue;
    st.windows = r.windows;
    double median = OthersMedianMs(records, r.rank);
    if (median < 0) continue;
    bool over = r.compute_ms >= median * (1 + options_.percent / 100) &&
                r.compute_ms - median >= options_.min_ms;
    st.over = over ? st.over + 1 : 0;
    st.under = over ? 0 : st.under + 1;
    // %.0f, not a cast to int: a record's figures may be absurd.
    char pct[32];
    snprintf(pct, sizeof(pct), "%.0f",
             median > 0 ? (r.compute_ms / median - 1) * 100 : 0.0);
    std::string figures = Ms(r.compute_ms) + " ms of compute per step, " + pct +
                          " % over the other ranks' median of " + Ms(median) +
                          " ms";
    if (!named_.count(r.rank) && st.over >= options_.windows) {
      std::string line = std::string(kPrefix) + Who(r) + ": " + figures + ", " +
                         std::to_string(st.over) +
                         " windows in a row (at step " +
                         std::to_string(r.steps) + ")\n";
      named_[r.rank] = line;
      out += line;
    } else if (named_.count(r.rank) && st.under >= options_.windows) {
      named_.erase(r.rank);
      out += std::string(kPrefix) + Who(r) +
             " is no longer behind: " + Ms(r.compute_ms) +
             " ms of compute per step, the others' median " + Ms(median) +
             " ms (at step " + std::to_string(r.steps) + ")\n";
    }
  }
  return out;
}

std::set<int> StragglerTracker::named() const {
  std::set<int> ranks;
  for (const auto& kv : named_) ranks.insert(kv.first);
  return ranks;
}

std::string StragglerTracker::NamedText() const {
  std::string text;
  for (const auto& kv : named_) text += kv.second;
  return text;
}

}  // namespace dist_train
