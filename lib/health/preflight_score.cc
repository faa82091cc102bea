// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/preflight_score.h"

#include <algorithm>
#include <cstdio>

namespace dist_train {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// "CPU 0.21 GFLOP/s, 9% of the median 2.30" when `value` is slow.
void CheckRate(const char* what, const char* unit, double value, double median,
               double fraction, std::vector<std::string>* reasons) {
  if (value < 0 || median <= 0 || value >= fraction * median) return;
  int percent = static_cast<int>(100 * value / median + 0.5);
  reasons->push_back(std::string("slow: ") + what + " " + Fixed(value, 2) +
                     " " + unit + ", " + std::to_string(percent) +
                     "% of the median " + Fixed(median, 2));
}

std::vector<std::string> Reasons(const NodeProbe& p, const PreflightScore& s,
                                 const ScoreOptions& o) {
  std::vector<std::string> r;
  if (p.gpus_expected > 0 && p.gpus_found < p.gpus_expected) {
    r.push_back(std::to_string(std::max(p.gpus_found, 0)) + " of " +
                std::to_string(p.gpus_expected) +
                " GPUs usable (CUDA_VISIBLE_DEVICES names " +
                std::to_string(p.gpus_expected) + ")");
  }
  if (!p.nic.empty() && !p.nic_up) {
    r.push_back("interface " + p.nic + " is " + p.nic_state);
  }
  CheckRate("CPU", "GFLOP/s", p.cpu_gflops, s.median_cpu_gflops,
            o.slow_fraction, &r);
  CheckRate("memory", "GB/s", p.mem_gbps, s.median_mem_gbps, o.slow_fraction,
            &r);
  return r;
}

}  // namespace

double MedianOf(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(),
                              [](double v) { return !(v >= 0); }),
               values.end());
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

PreflightScore ScoreProbes(const std::vector<NodeProbe>& probes,
                           const ScoreOptions& options) {
  PreflightScore s;
  std::vector<double> cpu, mem;
  for (const NodeProbe& p : probes) {
    cpu.push_back(p.cpu_gflops);
    mem.push_back(p.mem_gbps);
    s.any_gpu = s.any_gpu || p.gpus_found > 0 || p.gpus_expected > 0;
  }
  s.median_cpu_gflops = MedianOf(cpu);
  s.median_mem_gbps = MedianOf(mem);
  for (const NodeProbe& p : probes) {
    std::vector<std::string> reasons = Reasons(p, s, options);
    if (!reasons.empty()) s.bad.push_back({p.host, std::move(reasons)});
  }
  return s;
}

std::string PreflightReport(const std::vector<NodeProbe>& probes,
                            const PreflightScore& score,
                            const NetworkResult& net) {
  const std::string head = "dist-train: preflight: ";
  std::string out;
  size_t n = probes.size();
  if (score.bad.empty()) {
    out += head + "passed: " + std::to_string(n) +
           (n == 1 ? " node" : " nodes") + ", median CPU " +
           Fixed(score.median_cpu_gflops, 2) + " GFLOP/s, memory " +
           Fixed(score.median_mem_gbps, 2) + " GB/s\n";
  } else {
    out += head + std::to_string(score.bad.size()) + " of " +
           std::to_string(n) + " nodes " +
           (score.bad.size() == 1 ? "is" : "are") + " bad or slow:\n";
    for (const NodeVerdict& v : score.bad) {
      for (const std::string& r : v.reasons)
        out += "  " + v.host + ": " + r + "\n";
    }
  }
  if (net.ranks > 1) {
    out += head + "network: " + std::to_string(net.ranks) + " ranks (" +
           net.how + "), all-reduce 8 B " + Fixed(net.small_us, 0) +
           " us, 4 MiB " + Fixed(net.large_gbps, 2) + " GB/s\n";
  }
  if (!score.any_gpu) out += head + "no GPU on any node: GPU checks skipped\n";
  return out;
}

}  // namespace dist_train
