// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/rdma_check.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <vector>

#include "base/small_file.h"

namespace dist_train {
namespace {

// Entry names of `dir` in order, without . and .. (none if unreadable).
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const struct dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// ReadSmallFile (read(2)), not an ifstream: the plugin links libstdc++
// statically, and one stream brings in its whole locale (plugin text 1.53
// -> 0.76 MB). The files read here are sysfs lines of a few bytes.
std::string FirstLine(const std::string& path) {
  char buf[256];
  if (ReadSmallFile(path.c_str(), buf, sizeof(buf)) <= 0) return "";
  std::string text(buf);
  return text.substr(0, text.find('\n'));
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// "" when some port is ACTIVE, else the ports' states ("port 1: 1: DOWN").
std::string InactivePorts(const std::string& hca_dir) {
  std::string states;
  for (const std::string& port : Entries(hca_dir + "/ports")) {
    std::string state = FirstLine(hca_dir + "/ports/" + port + "/state");
    if (state.find("ACTIVE") != std::string::npos) return "";
    states += (states.empty() ? "" : ", ") + ("port " + port + ": ") +
              (state.empty() ? "unknown" : state);
  }
  return states.empty() ? "no ports" : states;
}

std::string Ranks(const std::vector<uint32_t>& ranks) {
  std::vector<int> v(ranks.begin(), ranks.end());
  return FormatIndexList(v);
}

}  // namespace

std::string RdmaUnusableReason(const std::string& hca, const RdmaRoots& roots) {
  std::string dir = roots.sys + "/class/infiniband/" + hca;
  if (!Exists(dir))
    return "it is not in /sys/class/infiniband (its driver is not loaded, "
           "or this task cannot see it)";
  std::string inactive = InactivePorts(dir);
  if (!inactive.empty()) return "no port is ACTIVE (" + inactive + ")";
  std::vector<std::string> verbs = Entries(dir + "/device/infiniband_verbs");
  if (verbs.empty()) return "it has no verbs device (is ib_uverbs loaded?)";
  for (const std::string& v : verbs)
    if (Exists(roots.dev + "/infiniband/" + v)) return "";
  return "/dev/infiniband/" + verbs.front() +
         " is absent (a container started without /dev/infiniband?)";
}

std::string RdmaFallbackNote(const NodeModel& model, const BindPlan& plan,
                             const RdmaRoots& roots) {
  if (plan.step_gpus.empty()) return "";
  std::map<int, std::vector<uint32_t>> ranks_of;  // NIC index -> local ranks
  for (const RankPlan& r : plan.ranks) {
    std::vector<int> nics = r.nics.empty() ? std::vector<int>{r.nic} : r.nics;
    for (int n : nics)
      if (n >= 0 && !model.nics[n].verbs.empty())
        ranks_of[n].push_back(r.local_rank);
  }
  std::string parts;
  for (const auto& [nic, ranks] : ranks_of) {
    const std::string& hca = model.nics[nic].verbs;
    std::string why = RdmaUnusableReason(hca, roots);
    if (why.empty()) continue;
    parts += (parts.empty() ? "" : "; ") + hca + " (local ranks " +
             Ranks(ranks) + "): " + why;
  }
  if (parts.empty()) return "";
  return "dist-train: warning: NCCL will fall back to TCP sockets, several "
         "times slower, on bound RDMA NICs it cannot use: " +
         parts;
}

}  // namespace dist_train
