// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Node lists as SLURM_STEP_NODELIST / SLURM_JOB_NODELIST hand them to the
// plugin inside slurmstepd (lib/base/hostlist.h, libslurm's
// slurm_hostlist_* behind it; those need no slurm_init on any supported
// release). libslurm is not instrumented, so besides "no crash, within
// libFuzzer's time and memory limits" the oracle is the cap: an accepted
// list names at most kMaxHosts hosts, and no more than CountHosts (the
// count from the text that decides what libslurm may expand) said. It may
// say more ("a.b\nc" counts 2, libslurm makes the one host "a.b\nc"):
// refusing early is safe, expanding more than counted is not.

#include <string>

#include "base/hostlist.h"
#include "fuzz/fuzz_check.h"

namespace dist_train {

int FuzzHostlist(const uint8_t* data, size_t size) {
  std::string_view list = FuzzText(data, size);
  list = list.substr(0, list.find('\0'));  // an environment value
  std::string first;
  int count = 0;
  if (!FirstHost(list, "SLURM_STEP_NODELIST", &first, &count).ok()) return 0;
  FuzzCheck(!first.empty() && count > 0, "an empty node list was accepted");
  FuzzCheck(static_cast<uint64_t>(count) <= kMaxHosts,
            "a node list over the cap was expanded", std::string(list));
  uint64_t counted = 0;
  FuzzCheck(
      CountHosts(list, &counted) && counted >= static_cast<uint64_t>(count),
      "CountHosts counted fewer hosts than libslurm expanded",
      std::string(list) + ": " + std::to_string(counted) + " vs " +
          std::to_string(count));
  return 0;
}

}  // namespace dist_train

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dist_train::FuzzHostlist(data, size);
}
