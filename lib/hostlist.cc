// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "hostlist.h"

#include <cstdlib>
#include <memory>

extern "C" {
#include <slurm/slurm.h>
}

namespace dist_train {
namespace {

// hostlist_t is a pointer up to 23.02 and a struct from 23.11 on.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
using HostlistHandle = hostlist_t*;
#else
using HostlistHandle = hostlist_t;
#endif

struct HostlistDeleter {
  void operator()(std::remove_pointer_t<HostlistHandle>* hl) const {
    slurm_hostlist_destroy(hl);
  }
};
using HostlistPtr =
    std::unique_ptr<std::remove_pointer_t<HostlistHandle>, HostlistDeleter>;

Status Malformed(std::string_view nodelist, const char* what) {
  return Status::InvalidArgument(std::string(what) + "='" +
                                 std::string(nodelist) +
                                 "' is not a valid Slurm node list");
}

// libslurm accepts some malformed lists ("node[1-" expands to "node]"), so
// reject unbalanced or nested brackets before handing the list over.
bool BracketsBalanced(std::string_view nodelist) {
  bool open = false;
  for (char c : nodelist) {
    if (c == '[') {
      if (open) return false;
      open = true;
    } else if (c == ']') {
      if (!open) return false;
      open = false;
    }
  }
  return !open;
}

}  // namespace

Status FirstHost(std::string_view nodelist, const char* what,
                 std::string* first, int* count) {
  if (nodelist.empty() || !BracketsBalanced(nodelist)) {
    return Malformed(nodelist, what);
  }
  std::string copy(nodelist);
  HostlistPtr hl(slurm_hostlist_create(copy.c_str()));
  if (!hl) return Malformed(nodelist, what);
  int n = slurm_hostlist_count(hl.get());
  char* host = slurm_hostlist_shift(hl.get());
  if (n <= 0 || host == nullptr || *host == '\0') {
    free(host);
    return Malformed(nodelist, what);
  }
  *first = host;
  *count = n;
  free(host);
  return Status::OK();
}

}  // namespace dist_train
