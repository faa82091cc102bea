// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/binding.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/parse.h"

namespace dist_train {
namespace {

constexpr uint64_t kMaxIndex = 1 << 20;

std::vector<int> Intersect(const std::vector<int>& a,
                           const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::back_inserter(out));
  return out;
}

bool Overlaps(const std::vector<int>& a, const std::vector<int>& b) {
  return !Intersect(a, b).empty();
}

Status StepGpus(const NodeModel& m, const BindRequest& req,
                std::vector<int>* out) {
  out->clear();
  if (!req.gpus) {
    for (size_t i = 0; i < m.gpus.size(); ++i)
      out->push_back(static_cast<int>(i));
    return Status::OK();
  }
  for (int g : *req.gpus) {
    if (g < 0 || static_cast<size_t>(g) >= m.gpus.size()) {
      return Status::InvalidArgument("GPU index " + std::to_string(g) +
                                     " is not on this node (it has " +
                                     std::to_string(m.gpus.size()) + " GPUs)");
    }
    out->push_back(g);
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return Status::OK();
}

std::vector<int> AllowedCpus(const NodeModel& m, const BindRequest& req,
                             BindPlan* plan) {
  std::vector<int> all = AllPus(m);
  if (!req.cpus) return all;
  std::vector<int> wanted = *req.cpus;
  std::sort(wanted.begin(), wanted.end());
  std::vector<int> allowed = Intersect(all, wanted);
  if (allowed.empty()) {
    plan->warnings.push_back("none of the step's CPUs " +
                             FormatIndexList(wanted) +
                             " is in the topology; using all of its CPUs");
    return all;
  }
  return allowed;
}

std::vector<int> Domain(const NodeModel& m, int gpu,
                        const std::vector<int>& allowed, BindPlan* plan) {
  if (gpu < 0 || m.gpus[gpu].local_pus.empty()) return allowed;
  std::vector<int> d = Intersect(m.gpus[gpu].local_pus, allowed);
  if (!d.empty()) return d;
  plan->warnings.push_back("no CPU of the step is local to GPU " +
                           m.gpus[gpu].busid + "; its ranks use all step CPUs");
  return allowed;
}

// Splits `domain` among `ranks` (local ranks, ascending).
void Split(const NodeModel& m, const std::vector<int>& domain,
           const std::vector<uint32_t>& ranks, CpuShare share, BindPlan* plan) {
  std::vector<std::vector<int>> cores;
  for (const Core& c : m.cores) {
    std::vector<int> pus = Intersect(c.pus, domain);
    if (!pus.empty()) cores.push_back(std::move(pus));
  }
  size_t n = ranks.size();
  for (size_t k = 0; k < n; ++k) {
    RankPlan& r = plan->ranks[ranks[k]];
    if (share == CpuShare::kDomain) {
      r.cpus = domain;
      r.cores = static_cast<int>(cores.size());
    } else if (cores.size() >= n) {
      size_t per = cores.size() / n;
      for (size_t c = k * per; c < (k + 1) * per; ++c) {
        r.cpus.insert(r.cpus.end(), cores[c].begin(), cores[c].end());
      }
      std::sort(r.cpus.begin(), r.cpus.end());
      r.cores = static_cast<int>(per);
    } else if (domain.size() >= n) {
      size_t per = domain.size() / n;
      r.cpus.assign(domain.begin() + k * per, domain.begin() + (k + 1) * per);
    } else {
      r.cpus = {domain[k % domain.size()]};
    }
  }
  if (share == CpuShare::kExclusive && cores.size() < n) {
    plan->warnings.push_back(
        std::to_string(n) + " ranks share " + std::to_string(cores.size()) +
        " cores (CPUs " + FormatIndexList(domain) + "): shares are " +
        (domain.size() >= n ? "hyperthreads, not whole cores" : "overlapping"));
  }
}

// Domains can overlap without being equal (a GPU local to a NUMA Group and
// another local to the Package around it, or a fallback to all step CPUs):
// the smaller domains are served first and the larger ones lose the CPUs
// already handed out, so exclusive shares stay disjoint.
void SplitDisjoint(
    const NodeModel& m,
    const std::map<std::vector<int>, std::vector<uint32_t>>& groups,
    BindPlan* plan) {
  std::vector<std::pair<std::vector<int>, std::vector<uint32_t>>> order(
      groups.begin(), groups.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) {
                     return a.first.size() < b.first.size();
                   });
  std::vector<int> claimed;
  for (auto& [domain, ranks] : order) {
    std::vector<int> free_cpus;
    std::set_difference(domain.begin(), domain.end(), claimed.begin(),
                        claimed.end(), std::back_inserter(free_cpus));
    if (free_cpus.empty()) {
      plan->warnings.push_back(
          "CPUs " + FormatIndexList(domain) +
          " are all taken by ranks of smaller domains; shares overlapping");
      free_cpus = domain;
    }
    Split(m, free_cpus, ranks, CpuShare::kExclusive, plan);
    std::vector<int> merged;
    std::set_union(claimed.begin(), claimed.end(), free_cpus.begin(),
                   free_cpus.end(), std::back_inserter(merged));
    claimed.swap(merged);
  }
}

void PlanCpus(const NodeModel& m, const BindRequest& req, BindPlan* plan) {
  bool bind = req.parts.cpu && req.parts.share != CpuShare::kNone;
  std::vector<int> allowed = AllowedCpus(m, req, plan);
  std::map<std::vector<int>, std::vector<uint32_t>> groups;
  for (RankPlan& r : plan->ranks) {
    groups[Domain(m, r.gpu, allowed, plan)].push_back(r.local_rank);
  }
  if (bind && req.parts.share == CpuShare::kExclusive) {
    SplitDisjoint(m, groups, plan);
  } else if (bind) {
    for (const auto& [domain, ranks] : groups)
      Split(m, domain, ranks, req.parts.share, plan);
  }
  for (RankPlan& r : plan->ranks) {
    for (const NumaNode& node : m.numa) {
      bool local =
          bind ? Overlaps(node.pus, r.cpus)
               : (r.gpu >= 0 ? std::count(m.gpus[r.gpu].local_numa.begin(),
                                          m.gpus[r.gpu].local_numa.end(),
                                          node.os_index) > 0
                             : true);
      if (local) r.numa.push_back(node.os_index);
    }
  }
}

// (tier, distance) of `nic` for rank `r`: lower is better.
std::pair<int, int> NicScore(const NodeModel& m, const RankPlan& r,
                             const PciDevice& nic) {
  int tier = static_cast<int>(nic.tier);
  if (r.gpu >= 0) return {tier, TreeDistance(m.gpus[r.gpu], nic)};
  bool near = r.cpus.empty() || nic.local_pus.empty() ||
              Overlaps(nic.local_pus, r.cpus);
  return {tier, near ? 0 : 1};
}

void PlanNics(const NodeModel& m, BindPlan* plan) {
  if (m.nics.empty()) return;
  std::map<std::vector<int>, std::vector<uint32_t>> by_candidates;
  for (RankPlan& r : plan->ranks) {
    std::pair<int, int> best{1 << 30, 1 << 30};
    std::vector<int> cands;
    for (size_t i = 0; i < m.nics.size(); ++i) {
      std::pair<int, int> s = NicScore(m, r, m.nics[i]);
      if (s < best) best = s, cands.clear();
      if (s == best) cands.push_back(static_cast<int>(i));
    }
    by_candidates[cands].push_back(r.local_rank);
  }
  for (const auto& [cands, ranks] : by_candidates) {
    for (size_t k = 0; k < ranks.size(); ++k) {
      plan->ranks[ranks[k]].nic = cands[k % cands.size()];
    }
  }
}

}  // namespace

Status PlanBinding(const NodeModel& model, const BindRequest& request,
                   BindPlan* plan) {
  if (request.ntasks == 0) {
    return Status::InvalidArgument("binding needs at least one local task");
  }
  if (AllPus(model).empty()) {
    // A topology without one PU (a bad XML): nothing to split, and
    // splitting nothing would divide by zero inside slurmstepd.
    return Status::InvalidArgument("the topology has no CPUs to bind to");
  }
  BindPlan p;
  DT_RETURN_IF_ERROR(StepGpus(model, request, &p.step_gpus));
  for (uint32_t i = 0; i < request.ntasks; ++i) {
    RankPlan r;
    r.local_rank = i;
    if (!p.step_gpus.empty()) {
      r.gpu_slot = static_cast<int>(i % p.step_gpus.size());
      r.gpu = p.step_gpus[r.gpu_slot];
    }
    p.ranks.push_back(r);
  }
  PlanCpus(model, request, &p);
  PlanNics(model, &p);
  *plan = std::move(p);
  return Status::OK();
}

namespace {

// One item of an index list, "3" or "0-7", as [*lo, *hi].
bool ParseIndexRange(std::string_view item, uint64_t* lo, uint64_t* hi) {
  size_t dash = item.find('-');
  if (!ParseUint(item.substr(0, dash), 0, kMaxIndex, lo)) return false;
  *hi = *lo;
  return dash == std::string_view::npos ||
         ParseUint(item.substr(dash + 1), *lo, kMaxIndex, hi);
}

}  // namespace

Status ParseIndexList(std::string_view text, const char* what,
                      std::vector<int>* out) {
  std::string shown = std::string(what) + "='" + ShownValue(text) + "'";
  if (text.empty()) {
    return Status::InvalidArgument(shown + ": expected a list like 0,2-3");
  }
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  uint64_t total = 0;
  for (std::string_view item : Split(text, ',')) {
    uint64_t lo = 0, hi = 0;
    if (!ParseIndexRange(item, &lo, &hi)) {
      return Status::InvalidArgument(shown + ": expected a list like 0,2-3");
    }
    total += hi - lo + 1;  // each term <= 2^20 + 1: no overflow before the cap
    if (total > kMaxIndexListEntries) {
      return Status::InvalidArgument(shown + ": more than " +
                                     std::to_string(kMaxIndexListEntries) +
                                     " indices (the cap)");
    }
    ranges.emplace_back(lo, hi);
  }
  std::vector<int> v;
  v.reserve(total);
  for (const auto& [lo, hi] : ranges) {
    for (uint64_t i = lo; i <= hi; ++i) v.push_back(static_cast<int>(i));
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  *out = std::move(v);
  return Status::OK();
}

std::string FormatIndexList(const std::vector<int>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(sorted[i]);
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace dist_train
