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

// One measured rate and what it is held against.
struct Rate {
  const char* what;  // "CPU"
  const char* unit;  // "GFLOP/s"
  const char* key;   // the plugstack.conf key of its floor
  double value;
  double median;
  double minimum;  // 0: none
};

// "slow: CPU 0.21 GFLOP/s, 9% of the median 2.30" when the rate is below
// `fraction` of the step's median, else "slow: CPU 0.21 GFLOP/s, below the
// site's minimum 2.00 (preflight_min_cpu_gflops)" when below the floor.
void CheckRate(const Rate& r, double fraction,
               std::vector<std::string>* reasons) {
  if (r.value < 0) return;
  std::string said =
      std::string("slow: ") + r.what + " " + Fixed(r.value, 2) + " " + r.unit;
  if (r.median > 0 && r.value < fraction * r.median) {
    int percent = static_cast<int>(100 * r.value / r.median + 0.5);
    reasons->push_back(said + ", " + std::to_string(percent) +
                       "% of the median " + Fixed(r.median, 2));
  } else if (r.value < r.minimum) {
    reasons->push_back(said + ", below the site's minimum " +
                       Fixed(r.minimum, 2) + " (" + r.key + ")");
  }
}

// "slow: link of eth0 10000 Mb/s, below the site's minimum 25000
// (preflight_min_link_mbps)".
void CheckLink(const NodeProbe& p, int64_t minimum,
               std::vector<std::string>* reasons) {
  if (p.nic.empty() || p.nic_speed_mbps <= 0 || p.nic_speed_mbps >= minimum)
    return;
  reasons->push_back("slow: link of " + p.nic + " " +
                     std::to_string(p.nic_speed_mbps) +
                     " Mb/s, below the site's minimum " +
                     std::to_string(minimum) + " (preflight_min_link_mbps)");
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
  CheckRate({"CPU", "GFLOP/s", "preflight_min_cpu_gflops", p.cpu_gflops,
             s.median_cpu_gflops, o.minimum.cpu_gflops},
            o.slow_fraction, &r);
  CheckRate({"memory", "GB/s", "preflight_min_mem_gbps", p.mem_gbps,
             s.median_mem_gbps, o.minimum.mem_gbps},
            o.slow_fraction, &r);
  CheckLink(p, o.minimum.link_mbps, &r);
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
