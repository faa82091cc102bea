// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// libslurm's hostlist handle, owned: for base/hostlist.cc and
// base/node_set.cc only (it includes <slurm/slurm.h>, which no other
// header of ours does).

#ifndef DIST_TRAIN_LIB_BASE_HOSTLIST_HANDLE_H_
#define DIST_TRAIN_LIB_BASE_HOSTLIST_HANDLE_H_

#include <memory>
#include <type_traits>

extern "C" {
#include <slurm/slurm.h>
}

namespace dist_train {

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

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_HOSTLIST_HANDLE_H_
