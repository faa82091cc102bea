// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/hang_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "base/parse.h"

namespace dist_train {
namespace {

constexpr const char* kPrefix = "dist-train: watchdog: ";

std::string Number(double v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.0f", v);
  return buf;
}

// "all_reduce #121" (the collective's number counts from 1).
std::string CallText(const ProgressSnapshot& p) {
  if (p.collectives == 0) return "no collective yet";
  return std::string(CallKindName(p.call)) + " #" +
         std::to_string(p.collectives);
}

std::string StateText(char state) {
  switch (state) {
    case 'T':
    case 't':
      return "stopped (SIGSTOP or a debugger)";
    case 'Z':
    case 'X':
      return "exited";
    case 'D':
      return "in uninterruptible I/O";
    case 'R':
      return "running";
    default:
      return "waiting";
  }
}

std::string Where(const HangRecord& r) {
  return std::string(r.progress.inside ? "inside " : "after ") +
         CallText(r.progress);
}

std::string RankLine(const HangRecord& r, const std::string& others) {
  std::string line = std::string(kPrefix) + "rank " + std::to_string(r.rank) +
                     " on " + r.host + " (pid " + std::to_string(r.pid) +
                     ") did not progress: " + StateText(r.state) + ", " +
                     Where(r);
  return line + (others.empty() ? "" : "; " + others) + "\n";
}

// The ranks that stopped the others: behind in collectives, or stopped.
// When none is behind, every rank is named (all stuck in the same call).
std::vector<const HangRecord*> Laggards(const std::vector<HangRecord>& rs,
                                        uint64_t* most) {
  *most = 0;
  for (const HangRecord& r : rs)
    *most = std::max(*most, r.progress.collectives);
  std::vector<const HangRecord*> out;
  for (const HangRecord& r : rs) {
    bool behind = r.progress.collectives < *most;
    bool stopped = r.state == 'T' || r.state == 't';
    if (behind || stopped) out.push_back(&r);
  }
  if (out.empty())
    for (const HangRecord& r : rs) out.push_back(&r);
  return out;
}

std::string AheadText(const std::vector<HangRecord>& rs,
                      const std::vector<const HangRecord*>& named) {
  if (named.size() == rs.size()) return "";
  for (const HangRecord& r : rs) {
    if (std::find(named.begin(), named.end(), &r) == named.end())
      return "the others are " + Where(r);
  }
  return "";
}

std::string MissingLine(const std::vector<HangRecord>& rs, int world_size) {
  std::vector<bool> seen(static_cast<size_t>(std::max(world_size, 0)));
  for (const HangRecord& r : rs)
    if (r.rank >= 0 && r.rank < world_size) seen[r.rank] = true;
  std::string missing;
  int count = 0;
  for (int r = 0; r < world_size; ++r) {
    if (seen[r]) continue;
    if (++count <= 16)
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  }
  if (count == 0) return "";
  if (count > 16) missing += " and " + std::to_string(count - 16) + " more";
  return std::string(kPrefix) + "no record from rank" +
         (count > 1 ? "s " : " ") + missing +
         " (its node did not answer in time)\n";
}

}  // namespace

std::string EncodeHangRecord(const HangRecord& r) {
  std::ostringstream o;
  o << "rank=" << r.rank << "\nhost=" << r.host << "\npid=" << r.pid
    << "\nstate=" << r.state << "\ncollectives=" << r.progress.collectives
    << "\ninside=" << (r.progress.inside ? 1 : 0)
    << "\ncall=" << static_cast<uint32_t>(r.progress.call)
    << "\nheartbeats=" << r.progress.heartbeats
    << "\nidle=" << static_cast<uint64_t>(r.idle_seconds) << "\n";
  return o.str();
}

bool DecodeHangRecord(const std::string& text, HangRecord* out) {
  std::map<std::string, std::string> kv;
  if (!ParseKeyValueLines(text, &kv)) return false;
  uint64_t rank, pid, coll, inside, call, beats, idle;
  auto num = [&](const char* key, uint64_t max, uint64_t* v) {
    auto it = kv.find(key);
    return it != kv.end() && ParseUint(it->second, 0, max, v);
  };
  bool ok =
      kv.size() == 9 && num("rank", 1 << 24, &rank) &&
      num("pid", 1u << 30, &pid) && num("collectives", UINT64_MAX, &coll) &&
      num("inside", 1, &inside) &&
      num("call", static_cast<uint64_t>(CallKind::kReduceScatter), &call) &&
      num("heartbeats", UINT64_MAX, &beats) && num("idle", 1u << 30, &idle) &&
      kv.count("host") && kv["host"].size() <= 255 && kv.count("state") &&
      kv["state"].size() == 1;
  if (!ok) return false;
  HangRecord r;
  r.rank = static_cast<int>(rank);
  r.host = kv["host"];
  r.pid = static_cast<int64_t>(pid);
  r.state = kv["state"][0];
  r.progress.collectives = coll;
  r.progress.inside = inside == 1;
  r.progress.call = static_cast<CallKind>(call);
  r.progress.heartbeats = beats;
  r.idle_seconds = static_cast<double>(idle);
  *out = r;
  return true;
}

std::vector<std::string> HungHosts(const std::vector<HangRecord>& records) {
  uint64_t most = 0;
  std::vector<const HangRecord*> named = Laggards(records, &most);
  std::vector<std::string> hosts;
  if (named.size() == records.size()) return hosts;
  for (const HangRecord* r : named)
    if (std::find(hosts.begin(), hosts.end(), r->host) == hosts.end())
      hosts.push_back(r->host);
  return hosts;
}

std::string HangSummary(const std::vector<HangRecord>& records, int world_size,
                        double seconds, const std::string& dir) {
  std::vector<HangRecord> rs = records;
  std::sort(rs.begin(), rs.end(), [](const HangRecord& a, const HangRecord& b) {
    return a.rank < b.rank;
  });
  std::string out = std::string(kPrefix) + "no rank progressed for " +
                    Number(seconds) + " s; " + std::to_string(rs.size()) +
                    " of " + std::to_string(world_size) +
                    " ranks reported, stacks in " + dir + "\n";
  uint64_t most = 0;
  std::vector<const HangRecord*> named = Laggards(rs, &most);
  std::string others = AheadText(rs, named);
  for (const HangRecord* r : named) out += RankLine(*r, others);
  return out + MissingLine(rs, world_size);
}

}  // namespace dist_train
