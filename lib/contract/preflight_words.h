// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The values of the preflight gate's settings (health/preflight.h), shared
// by the --dist-train words and the plugstack.conf keys
// (contract/options.h): how long it may take and what a bad node does.

#ifndef DIST_TRAIN_LIB_CONTRACT_PREFLIGHT_WORDS_H_
#define DIST_TRAIN_LIB_CONTRACT_PREFLIGHT_WORDS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace dist_train {

struct JobOptions;  // contract/options.h

// What a failed preflight does to the step.
enum class PreflightPolicy {
  kWarn,  // print the report, start the program anyway
  kFail,  // end the step before the program starts
  // end the step, requeue the job with the bad nodes added to its
  // ExcNodeList (runtime/node_exclusion.h), at most DT_MAX_REQUEUES times
  kRequeue,
};

// dt-preflight's exit status (health/preflight.h), which the plugin and
// dt-wire read (wiring/task_preflight.h).
constexpr int kPreflightPassed = 0;  // passed, or warned (policy warn)
constexpr int kPreflightUsage = 2;   // bad arguments or environment
constexpr int kPreflightFailed = 3;  // a node is bad; policy fail or requeue

// Bounds of the whole check (rendezvous, probes, network), in seconds.
constexpr uint32_t kPreflightMinSeconds = 5;
constexpr uint32_t kPreflightMaxSeconds = 3600;
constexpr uint32_t kPreflightDefaultSeconds = 60;

// "" (the bare word): the default; "off": 0; else 5-3600.
bool ParsePreflightSeconds(std::string_view text, uint32_t* seconds);
// "off" or the number.
std::string PreflightSecondsName(uint32_t seconds);

bool ParsePreflightPolicy(std::string_view text, PreflightPolicy* policy);

// The site's floor under every node's probe, from plugstack.conf
// (preflight_min_cpu_gflops, preflight_min_mem_gbps,
// preflight_min_link_mbps): a node below one is bad even when the whole
// step is as slow, which the step's median cannot see. 0: no floor.
struct PreflightBaseline {
  double cpu_gflops = 0;
  double mem_gbps = 0;
  uint32_t link_mbps = 0;
};
constexpr double kPreflightMaxRate = 1e6;
constexpr uint32_t kPreflightMaxLinkMbps = 10000000;  // 10 Tb/s

// A rate of the baseline: a plain decimal number above 0 and at most
// kPreflightMaxRate ("2.5"; no sign, exponent, inf or nan).
bool ParsePreflightRate(std::string_view text, double* rate);
// `rate` to 6 decimals without trailing zeros ("2.5", "12").
std::string PreflightRateName(double rate);
const char* PreflightPolicyName(PreflightPolicy policy);

// The apply and format functions of the preflight and preflight-policy
// entries of JobWords() (contract/options.h).
bool ApplyPreflightWord(std::string_view value, JobOptions* opts);
bool ApplyPreflightPolicyWord(std::string_view value, JobOptions* opts);
std::string FormatPreflightWord(const JobOptions& opts);
std::string FormatPreflightPolicyWord(const JobOptions& opts);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_PREFLIGHT_WORDS_H_
