// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// An environment as dist-train's pure functions take and give it, and the
// one strict reader of its variables. Every reader returns OK with *out
// empty when the variable is unset (absent is not an error), OK with *out
// filled for a valid value, and InvalidArgument "NAME='value' is not ..."
// otherwise: a bad value is never ignored or replaced by a default, since a
// typo silently changing behaviour is worse than a job that does not start.

#ifndef DIST_TRAIN_LIB_BASE_ENV_H_
#define DIST_TRAIN_LIB_BASE_ENV_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dist_train/status.h"

namespace dist_train {

using EnvMap = std::map<std::string, std::string>;
using EnvAssignments = std::vector<std::pair<std::string, std::string>>;

// The current process environment (environ) as an EnvMap.
EnvMap ProcessEnv();

// The value of `name`, or nullptr when it is unset.
const std::string* EnvFind(const EnvMap& env, std::string_view name);

// The first of `names` that is set, or nullptr when none is.
const char* EnvFirstSet(const EnvMap& env,
                        std::initializer_list<const char*> names);

// A decimal integer in [min, max]:
// "NAME='v' is not an integer from MIN to MAX".
Status EnvUint(const EnvMap& env, std::string_view name, uint64_t min,
               uint64_t max, std::optional<uint64_t>* out);

// A count, a decimal integer in [0, UINT32_MAX]: "NAME='v' is not a count".
Status EnvCount(const EnvMap& env, std::string_view name,
                std::optional<uint64_t>* out);

// 1/true/yes/on or 0/false/no/off:
// "NAME='v' is not a boolean (1, true, yes, on, 0, false, no or off)".
Status EnvBool(const EnvMap& env, std::string_view name,
               std::optional<bool>* out);

// One of `words` (exact, case-sensitive), as its index:
// "NAME='v' is not one of A, B or C".
Status EnvOneOf(const EnvMap& env, std::string_view name,
                const std::vector<std::string>& words,
                std::optional<size_t>* out);

// Unix time, a decimal integer in [1, INT64_MAX]:
// "NAME='v' is not seconds since the epoch".
Status EnvEpochSeconds(const EnvMap& env, std::string_view name,
                       std::optional<int64_t>* out);

// A finite decimal number > 0 ("2.5"; no sign, blanks or hex):
// "NAME='v' is not a positive number of seconds".
Status EnvSeconds(const EnvMap& env, std::string_view name,
                  std::optional<double>* out);

// Any other format: `parse` accepts the value (and may keep what it
// parsed); a refusal reads "NAME='v' " + is_not. *out is the raw value.
Status EnvParse(const EnvMap& env, std::string_view name,
                const std::function<bool(const std::string&)>& parse,
                std::string_view is_not, std::optional<std::string>* out);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_ENV_H_
