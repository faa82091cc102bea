// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The hang watchdog's options from the environment (runtime/watchdog.h).
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "base/parse.h"
#include "runtime/watchdog.h"

namespace dist_train {

namespace {

// The rank and world size: given (>= 0, > 0), else RANK / SLURM_PROCID
// and WORLD_SIZE / SLURM_NTASKS, else 0 of 1.
Status ReadPlace(const EnvMap& env, int rank, int world_size,
                 WatchdogOptions* o) {
  std::optional<uint64_t> r, n;
  const char* rank_var = EnvFirstSet(env, {"RANK", "SLURM_PROCID"});
  const char* size_var = EnvFirstSet(env, {"WORLD_SIZE", "SLURM_NTASKS"});
  if (rank < 0 && rank_var)
    DT_RETURN_IF_ERROR(EnvUint(env, rank_var, 0, (1 << 24) - 1, &r));
  if (world_size <= 0 && size_var)
    DT_RETURN_IF_ERROR(EnvUint(env, size_var, 1, 1 << 24, &n));
  o->rank = rank >= 0 ? rank : static_cast<int>(r.value_or(0));
  o->world_size = world_size > 0 ? world_size : static_cast<int>(n.value_or(1));
  o->poll_seconds = std::min(0.1 * std::max(1, (o->world_size + 15) / 16), 2.0);
  if (o->rank >= o->world_size) {
    return Status::InvalidArgument("watchdog: rank " + std::to_string(o->rank) +
                                   " is not below " +
                                   std::to_string(o->world_size) + " ranks");
  }
  return Status::OK();
}

}  // namespace

Status ReadWatchdogOptions(const EnvMap& env, int rank, int world_size,
                           WatchdogOptions* o) {
  std::optional<uint64_t> seconds;
  DT_RETURN_IF_ERROR(EnvUint(env, kWatchdogVar, kWatchdogMinSeconds,
                             kWatchdogMaxSeconds, &seconds));
  o->seconds = seconds ? static_cast<double>(*seconds) : 0;
  if (!seconds) return Status::OK();  // no watchdog: nothing else matters
  DT_RETURN_IF_ERROR(ReadPlace(env, rank, world_size, o));
  if (const std::string* policy = EnvFind(env, kWatchdogPolicyVar)) {
    if (*policy != "fail" && *policy != "requeue") {
      return Status::InvalidArgument(std::string(kWatchdogPolicyVar) + "='" +
                                     ShownValue(*policy) +
                                     "' is not fail or requeue");
    }
    o->requeue = *policy == "requeue";
  }
  const char* d = EnvFirstSet(env, {"DT_WATCHDOG_DIR", "SLURM_SUBMIT_DIR"});
  o->dir = d ? *EnvFind(env, d) : ".";
  if (o->dir.empty())
    return Status::InvalidArgument(std::string(d) + " is empty");
  if (const std::string* h = EnvFind(env, "SLURMD_NODENAME")) {
    o->host = *h;
  } else {
    char buf[256] = {};
    gethostname(buf, sizeof(buf) - 1);
    o->host = buf;
  }
  return Status::OK();
}

}  // namespace dist_train
