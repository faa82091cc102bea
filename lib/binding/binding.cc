// Copyright dist-train authors. SPDX-License-Identifier: MIT
// Over 400 lines: the planner's steps (GPUs per rank, NICs by tier and
// distance, CPU shares) read in order; a split is planned with #31's rest.
#include "binding/binding.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/parse.h"

namespace dist_train {
namespace {

constexpr uint64_t kMaxIndex = 1 << 20;

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

// A rank using a CPU domain, with the number of its GPUs local to it.
struct Member {
  uint32_t rank = 0;
  size_t weight = 1;
};

size_t Gcd(size_t a, size_t b) { return b == 0 ? a : Gcd(b, a % b); }

// Adds one share to a rank's CPUs. `cores` = whole cores in it, 0 when the
// share is hyperthreads or overlapping; a rank with several shares counts
// the cores its union touches, or 0 when any share was not whole cores.
void AddShare(const NodeModel& m, std::vector<int> share, int cores,
              RankPlan* r) {
  if (r->cpus.empty()) {
    r->cpus = std::move(share);
    r->cores = cores;
    return;
  }
  bool whole = r->cores > 0 && cores > 0;
  std::vector<int> merged;
  std::set_union(r->cpus.begin(), r->cpus.end(), share.begin(), share.end(),
                 std::back_inserter(merged));
  r->cpus.swap(merged);
  r->cores = 0;
  if (!whole) return;
  for (const Core& c : m.cores) r->cores += Overlaps(c.pus, r->cpus) ? 1 : 0;
}

// Splits `domain` among `members` (local ranks, ascending): a member with
// weight w gets w equal parts (weights reduced by their gcd, so equal
// weights are one part per rank).
void Split(const NodeModel& m, const std::vector<int>& domain,
           const std::vector<Member>& members, CpuShare share, BindPlan* plan) {
  std::vector<std::vector<int>> cores;
  for (const Core& c : m.cores) {
    std::vector<int> pus = Intersect(c.pus, domain);
    if (!pus.empty()) cores.push_back(std::move(pus));
  }
  size_t g = 0, units = 0;
  for (const Member& mb : members) g = Gcd(g, mb.weight);
  for (const Member& mb : members) units += mb.weight / g;
  size_t first = 0;  // parts handed out before this member
  for (const Member& mb : members) {
    size_t w = mb.weight / g;
    std::vector<int> cpus;
    int whole = 0;
    if (share == CpuShare::kDomain) {
      cpus = domain;
      whole = static_cast<int>(cores.size());
    } else if (cores.size() >= units) {
      size_t per = cores.size() / units;
      for (size_t c = first * per; c < (first + w) * per; ++c) {
        cpus.insert(cpus.end(), cores[c].begin(), cores[c].end());
      }
      std::sort(cpus.begin(), cpus.end());
      whole = static_cast<int>(w * per);
    } else if (domain.size() >= units) {
      size_t per = domain.size() / units;
      cpus.assign(domain.begin() + first * per,
                  domain.begin() + (first + w) * per);
    } else {
      for (size_t j = 0; j < w; ++j)
        cpus.push_back(domain[(first + j) % domain.size()]);
      std::sort(cpus.begin(), cpus.end());
      cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    }
    AddShare(m, std::move(cpus), whole, &plan->ranks[mb.rank]);
    first += w;
  }
  if (share == CpuShare::kExclusive && cores.size() < units) {
    std::string who = std::to_string(members.size()) + " ranks";
    if (units != members.size())
      who += " (" + std::to_string(units) + " GPU shares)";
    plan->warnings.push_back(
        who + " share " + std::to_string(cores.size()) + " cores (CPUs " +
        FormatIndexList(domain) + "): shares are " +
        (domain.size() >= units ? "hyperthreads, not whole cores"
                                : "overlapping"));
  }
}

using Groups = std::map<std::vector<int>, std::vector<Member>>;

// Domains can overlap without being equal (a GPU local to a NUMA Group and
// another local to the Package around it, or a fallback to all step CPUs):
// the smaller domains are served first and the larger ones lose the CPUs
// already handed out, so exclusive shares stay disjoint.
void SplitDisjoint(const NodeModel& m, const Groups& groups, BindPlan* plan) {
  std::vector<std::pair<std::vector<int>, std::vector<Member>>> order(
      groups.begin(), groups.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) {
                     return a.first.size() < b.first.size();
                   });
  std::vector<int> claimed;
  for (auto& [domain, members] : order) {
    std::vector<int> free_cpus;
    std::set_difference(domain.begin(), domain.end(), claimed.begin(),
                        claimed.end(), std::back_inserter(free_cpus));
    if (free_cpus.empty()) {
      plan->warnings.push_back(
          "CPUs " + FormatIndexList(domain) +
          " are all taken by ranks of smaller domains; shares overlapping");
      free_cpus = domain;
    }
    Split(m, free_cpus, members, CpuShare::kExclusive, plan);
    std::vector<int> merged;
    std::set_union(claimed.begin(), claimed.end(), free_cpus.begin(),
                   free_cpus.end(), std::back_inserter(merged));
    claimed.swap(merged);
  }
}

// Each rank joins the domain of each of its GPUs (the allowed CPUs when it
// has none), weighted by how many of its GPUs share that domain.
Groups DomainGroups(const NodeModel& m, const std::vector<int>& allowed,
                    BindPlan* plan) {
  Groups groups;
  for (const RankPlan& r : plan->ranks) {
    std::vector<int> gpus = r.gpus.empty() ? std::vector<int>{-1} : r.gpus;
    for (int g : gpus) {
      std::vector<Member>& members = groups[Domain(m, g, allowed, plan)];
      if (!members.empty() && members.back().rank == r.local_rank) {
        ++members.back().weight;
      } else {
        members.push_back({r.local_rank, 1});
      }
    }
  }
  return groups;
}

bool GpuLocalTo(const NodeModel& m, const RankPlan& r, int numa) {
  if (r.gpus.empty()) return true;
  for (int g : r.gpus) {
    const std::vector<int>& local = m.gpus[g].local_numa;
    if (std::count(local.begin(), local.end(), numa) > 0) return true;
  }
  return false;
}

void PlanCpus(const NodeModel& m, const BindRequest& req, BindPlan* plan) {
  bool bind = req.parts.cpu && req.parts.share != CpuShare::kNone;
  std::vector<int> allowed = AllowedCpus(m, req, plan);
  Groups groups = DomainGroups(m, allowed, plan);
  if (bind && req.parts.share == CpuShare::kExclusive) {
    SplitDisjoint(m, groups, plan);
  } else if (bind) {
    for (const auto& [domain, members] : groups)
      Split(m, domain, members, req.parts.share, plan);
  }
  for (RankPlan& r : plan->ranks) {
    for (const NumaNode& node : m.numa) {
      bool local =
          bind ? Overlaps(node.pus, r.cpus) : GpuLocalTo(m, r, node.os_index);
      if (local) r.numa.push_back(node.os_index);
    }
  }
}

// (tier, distance) of `nic` for GPU `gpu` of rank `r` (-1: CPU-only): lower
// is better.
std::pair<int, int> NicScore(const NodeModel& m, const RankPlan& r, int gpu,
                             const PciDevice& nic) {
  int tier = static_cast<int>(nic.tier);
  if (gpu >= 0) return {tier, TreeDistance(m.gpus[gpu], nic)};
  bool near = r.cpus.empty() || nic.local_pus.empty() ||
              Overlaps(nic.local_pus, r.cpus);
  return {tier, near ? 0 : 1};
}

// One GPU of one rank (gpu -1: a CPU-only rank), with its best NIC score.
struct NicUnit {
  uint32_t rank = 0;
  std::pair<int, int> score;
  int nic = -1;
};

void PlanNics(const NodeModel& m, BindPlan* plan) {
  if (m.nics.empty()) return;
  std::vector<NicUnit> units;
  std::map<std::vector<int>, std::vector<size_t>> by_candidates;
  for (const RankPlan& r : plan->ranks) {
    std::vector<int> gpus = r.gpus.empty() ? std::vector<int>{-1} : r.gpus;
    for (int g : gpus) {
      std::pair<int, int> best{1 << 30, 1 << 30};
      std::vector<int> cands;
      for (size_t i = 0; i < m.nics.size(); ++i) {
        std::pair<int, int> s = NicScore(m, r, g, m.nics[i]);
        if (s < best) best = s, cands.clear();
        if (s == best) cands.push_back(static_cast<int>(i));
      }
      by_candidates[cands].push_back(units.size());
      units.push_back({r.local_rank, best, -1});
    }
  }
  for (const auto& [cands, members] : by_candidates) {
    for (size_t k = 0; k < members.size(); ++k)
      units[members[k]].nic = cands[k % cands.size()];
  }
  std::stable_sort(
      units.begin(), units.end(), [](const NicUnit& a, const NicUnit& b) {
        return std::tie(a.rank, a.score) < std::tie(b.rank, b.score);
      });
  for (const NicUnit& u : units) {
    RankPlan& r = plan->ranks[u.rank];
    if (std::count(r.nics.begin(), r.nics.end(), u.nic) == 0)
      r.nics.push_back(u.nic);
    r.nic = r.nics.front();
  }
}

// GPUs per rank: the request's, else one each, or all divided among fewer
// ranks; never more than the step has.
size_t GpusPerRank(const BindRequest& req, size_t n) {
  size_t k = req.gpus_per_task;
  if (k == 0) k = req.ntasks >= n ? 1 : n / req.ntasks;
  return std::min(k, n);
}

std::string Counted(size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// What to change so that every GPU is in a plan.
std::string UnusedGpusHint(const BindRequest& req, size_t n, size_t k) {
  std::vector<std::string> ways;
  if (req.gpus_per_task == 0) {
    for (size_t d = 1; d <= n; ++d) {
      if (n % d == 0) ways.push_back(std::to_string(d));
    }
    return "use a task count that divides " + std::to_string(n) + " (" +
           JoinAlternatives(ways) + ")";
  }
  if (n % req.ntasks == 0 && n / req.ntasks != k)
    ways.push_back("--gpus-per-task=" + std::to_string(n / req.ntasks));
  if (n % k == 0) ways.push_back(Counted(n / k, "task"));
  if (ways.empty()) return "use tasks x --gpus-per-task = " + Counted(n, "GPU");
  return "use " + JoinAlternatives(ways);
}

// "GPUs 4-7 are in no task's plan: 4 tasks with 1 GPU each on 8 GPUs; use
// --gpus-per-task=2 or 8 tasks"
std::string UnusedGpusWarning(const BindRequest& req, const BindPlan& p,
                              const std::vector<int>& unused, size_t k) {
  size_t n = p.step_gpus.size();
  std::string what = unused.size() == 1 ? "GPU " : "GPUs ";
  std::string verb = unused.size() == 1 ? " is" : " are";
  std::string tasks = Counted(req.ntasks, "task");
  tasks +=
      req.gpus_per_task == 0
          ? " on " + Counted(n, "GPU") + " get " + std::to_string(k) + " each"
          : " with " + Counted(k, "GPU") + " each on " + Counted(n, "GPU");
  return what + FormatIndexList(unused) + verb +
         " in no task's plan: " + tasks + "; " + UnusedGpusHint(req, n, k);
}

void AssignGpus(const BindRequest& req, BindPlan* p) {
  size_t n = p->step_gpus.size();
  if (n == 0) return;
  size_t k = GpusPerRank(req, n);
  std::vector<bool> used(n, false);
  for (RankPlan& r : p->ranks) {
    for (size_t j = 0; j < k; ++j)
      r.gpu_slots.push_back(static_cast<int>((r.local_rank * k + j) % n));
    std::sort(r.gpu_slots.begin(), r.gpu_slots.end());
    for (int slot : r.gpu_slots) {
      r.gpus.push_back(p->step_gpus[slot]);
      used[slot] = true;
    }
    r.gpu_slot = r.gpu_slots.front();
    r.gpu = r.gpus.front();
  }
  std::vector<int> unused;
  for (size_t i = 0; i < n; ++i) {
    if (!used[i]) unused.push_back(p->step_gpus[i]);
  }
  if (!unused.empty())
    p->warnings.push_back(UnusedGpusWarning(req, *p, unused, k));
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
    p.ranks.push_back(r);
  }
  AssignGpus(request, &p);
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

Status GpuPositions(const NodeModel& model, std::string_view bus_ids,
                    const char* what, std::vector<int>* out) {
  std::vector<int> found;
  for (std::string_view id : Split(bus_ids, ',')) {
    auto it = std::find_if(model.gpus.begin(), model.gpus.end(),
                           [&](const PciDevice& g) { return g.busid == id; });
    if (it == model.gpus.end()) {
      return Status::InvalidArgument(std::string(what) + " names GPU '" +
                                     ShownValue(id) +
                                     "', which is not on this node (" +
                                     Counted(model.gpus.size(), "GPU") + ")");
    }
    found.push_back(static_cast<int>(it - model.gpus.begin()));
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  *out = std::move(found);
  return Status::OK();
}

Status ParseGpusPerTask(std::string_view text, const char* what,
                        uint32_t* out) {
  uint64_t total = 0;
  for (std::string_view item : Split(text, ',')) {
    size_t colon = item.rfind(':');
    uint64_t n = 0;
    if (!ParseUint(
            colon == std::string_view::npos ? item : item.substr(colon + 1), 1,
            4096, &n) ||
        colon == 0) {
      return Status::InvalidArgument(std::string(what) + "='" +
                                     ShownValue(text) +
                                     "': expected a count like 2 or a100:2");
    }
    total += n;
  }
  if (total > 4096) {
    return Status::InvalidArgument(std::string(what) + "='" + ShownValue(text) +
                                   "': more than 4096 GPUs per task");
  }
  *out = static_cast<uint32_t>(total);
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
