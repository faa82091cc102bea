// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Reading the job/task environment inside slurmstepd (spank_getenv). The
// job's user sets these values, so each is read up to a cap: a longer one
// is an error naming the variable, never truncated and never taken as unset.

#ifndef DIST_TRAIN_SPANK_SPANK_ENV_H_
#define DIST_TRAIN_SPANK_SPANK_ENV_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "dist_train/status.h"
#include "spank_host.h"
#include "wiring/env_sink.h"

namespace dist_train {

// Node lists (names ending in NODELIST) may be long: 1 MiB.
constexpr size_t kMaxNodeListEnvValue = size_t{1} << 20;
// Every other value the plugin reads: 64 KiB.
constexpr size_t kMaxEnvValue = size_t{64} << 10;

// The cap for variable `name`: one of the two above.
size_t EnvValueCap(std::string_view name);

// The value of `name` in the job's environment, read whole; *out is empty
// when it is unset. A value over EnvValueCap(name) bytes is an error:
// "NAME is longer than CAP bytes (the cap)".
Status ReadEnv(SpankHost& host, const char* name,
               std::optional<std::string>* out);

// Best effort: the value of `name`; false when it is unset or over the cap.
bool GetEnv(SpankHost& host, const char* name, std::string* out);

// Writes `value` over the value of the first "name=..." entry of the
// NULL-terminated array `env`, in that entry's own bytes: true when there
// is one and its value is at least as long as `value` (a shorter value
// ends at its NUL), else false and nothing is written.
bool OverwriteEnvEntry(char** env, std::string_view name,
                       std::string_view value);

// The job's environment in slurmstepd as the wiring pipeline's sink
// (wiring/env_sink.h): spank_setenv / spank_unsetenv; SLURM_TASK_PID
// written in place where it fits (SpankHost::OverwriteEnv).
class SpankEnvSink : public EnvSink {
 public:
  explicit SpankEnvSink(SpankHost& host) : host_(host) {}
  Status Set(const std::string& name, const std::string& value) override;
  Status Unset(const std::string& name) override;
  Status SetTaskPid(const std::string& pid) override;

 private:
  SpankHost& host_;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_SPANK_ENV_H_
