// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/node_set.h"

#include <algorithm>
#include <cstdlib>

#include "base/hostlist.h"
#include "base/hostlist_handle.h"
#include "base/parse.h"

namespace dist_train {
namespace {

// libslurm's ranged form of `hosts`, each already checked; the buffer
// grows until it fits (slurm_hostlist_ranged_string returns -1 when cut).
Status Ranged(const std::vector<std::string>& hosts, const char* what,
              std::string* out) {
  HostlistPtr hl(slurm_hostlist_create(""));
  if (!hl) return Status::Internal(std::string(what) + ": no hostlist");
  for (const std::string& h : hosts) {
    if (slurm_hostlist_push_host(hl.get(), h.c_str()) <= 0)
      return Status::Internal(std::string(what) + ": cannot add " + h);
  }
  slurm_hostlist_uniq(hl.get());  // sorted, so neighbours share a range
  for (size_t size = 256; size <= (64u << 20); size *= 4) {
    std::string buf(size, '\0');
    ssize_t n = slurm_hostlist_ranged_string(hl.get(), size, buf.data());
    if (n >= 0 && static_cast<size_t>(n) < size) {
      buf.resize(static_cast<size_t>(n));
      *out = std::move(buf);
      return Status::OK();
    }
  }
  return Status::Internal(std::string(what) + ": node list too long");
}

}  // namespace

Status MergeNodeLists(const std::string& existing,
                      const std::vector<std::string>& add, const char* what,
                      std::string* merged) {
  std::vector<std::string> hosts;
  if (!existing.empty())
    DT_RETURN_IF_ERROR(ExpandHosts(existing, what, &hosts));
  for (const std::string& h : add) {
    std::vector<std::string> one;
    DT_RETURN_IF_ERROR(ExpandHosts(h, what, &one));
    if (one.size() != 1 || one[0] != h) {
      return Status::InvalidArgument(std::string(what) + ": '" + ShownValue(h) +
                                     "' is not one host name");
    }
    if (std::find(hosts.begin(), hosts.end(), h) == hosts.end())
      hosts.push_back(h);
  }
  if (hosts.empty()) return merged->clear(), Status::OK();
  return Ranged(hosts, what, merged);
}

}  // namespace dist_train
