// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/preflight_words.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/parse.h"
#include "contract/options.h"

namespace dist_train {

bool ParsePreflightSeconds(std::string_view text, uint32_t* seconds) {
  if (text.empty()) return *seconds = kPreflightDefaultSeconds, true;
  if (text == "off") return *seconds = 0, true;
  uint64_t n = 0;
  if (!ParseUint(text, kPreflightMinSeconds, kPreflightMaxSeconds, &n))
    return false;
  return *seconds = static_cast<uint32_t>(n), true;
}

std::string PreflightSecondsName(uint32_t seconds) {
  return seconds == 0 ? "off" : std::to_string(seconds);
}

bool ParsePreflightPolicy(std::string_view text, PreflightPolicy* policy) {
  if (text == "warn") return *policy = PreflightPolicy::kWarn, true;
  if (text == "fail") return *policy = PreflightPolicy::kFail, true;
  if (text == "requeue") return *policy = PreflightPolicy::kRequeue, true;
  return false;
}

// strtod and snprintf, not std::from_chars/to_chars: the plugin links
// libstdc++ statically, and those pull in ~200 KB of tables.
bool ParsePreflightRate(std::string_view text, double* rate) {
  size_t dots = 0;
  for (char c : text) {
    if (c == '.') ++dots;
    if (c != '.' && (c < '0' || c > '9')) return false;
  }
  if (text.empty() || text.size() > 32 || dots > 1 || text.front() == '.' ||
      text.back() == '.')
    return false;
  char buf[40];
  memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  double v = strtod(buf, nullptr);
  if (!(v > 0 && v <= kPreflightMaxRate)) return false;
  return *rate = v, true;
}

std::string PreflightRateName(double rate) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.6f", rate);
  std::string name = buf;
  name.erase(name.find_last_not_of('0') + 1);
  if (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

const char* PreflightPolicyName(PreflightPolicy policy) {
  switch (policy) {
    case PreflightPolicy::kFail:
      return "fail";
    case PreflightPolicy::kRequeue:
      return "requeue";
    case PreflightPolicy::kWarn:
      break;
  }
  return "warn";
}

bool ApplyPreflightWord(std::string_view v, JobOptions* o) {
  uint32_t seconds = 0;
  if (!ParsePreflightSeconds(v, &seconds)) return false;
  return o->preflight_seconds = seconds, true;
}

bool ApplyPreflightPolicyWord(std::string_view v, JobOptions* o) {
  PreflightPolicy policy;
  if (!ParsePreflightPolicy(v, &policy)) return false;
  return o->preflight_policy = policy, true;
}

std::string FormatPreflightWord(const JobOptions& o) {
  if (!o.preflight_seconds) return "";
  return "preflight=" + PreflightSecondsName(*o.preflight_seconds);
}
std::string FormatPreflightPolicyWord(const JobOptions& o) {
  if (!o.preflight_policy) return "";
  return std::string("preflight-policy=") +
         PreflightPolicyName(*o.preflight_policy);
}

}  // namespace dist_train
