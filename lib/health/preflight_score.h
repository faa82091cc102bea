// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Preflight's verdict (pure): each node's probe (health/node_probe.h)
// against the step's median, and the one report the step prints.
//
//   dist-train: preflight: 2 of 4 nodes are bad or slow:
//     node3: slow: CPU 0.21 GFLOP/s, 9% of the median 2.3
//     node4: 1 of 2 GPUs visible (CUDA_VISIBLE_DEVICES names 2)
//   dist-train: preflight: network: all-reduce 8 B 61 us, 4 MiB 0.83 GB/s

#ifndef DIST_TRAIN_LIB_HEALTH_PREFLIGHT_SCORE_H_
#define DIST_TRAIN_LIB_HEALTH_PREFLIGHT_SCORE_H_

#include <string>
#include <vector>

#include "contract/preflight_words.h"
#include "health/node_probe.h"

namespace dist_train {

struct ScoreOptions {
  // A node whose CPU rate or memory bandwidth is below this fraction of
  // the step's median is slow. 0.5 leaves room for the noise of nodes
  // that share a machine and still names a node throttled to a tenth.
  double slow_fraction = 0.5;
  // The site's floor (plugstack.conf preflight_min_*): a node below one
  // is slow whatever the median. A link speed the kernel does not report
  // (a virtual interface) is not held against its floor.
  PreflightBaseline minimum;
};

// One bad or slow node and every reason, in the probe's order.
struct NodeVerdict {
  std::string host;
  std::vector<std::string> reasons;
};

struct PreflightScore {
  std::vector<NodeVerdict> bad;  // in the order of `probes`
  double median_cpu_gflops = -1;
  double median_mem_gbps = -1;
  bool any_gpu = false;  // some node checked GPUs
};

// The median of the measured (>= 0) values; -1 when none.
double MedianOf(std::vector<double> values);

PreflightScore ScoreProbes(const std::vector<NodeProbe>& probes,
                           const ScoreOptions& options);

// The network line's numbers (NaN-free: -1 = not measured).
struct NetworkResult {
  int ranks = 0;
  double small_us = -1;    // median all-reduce of 8 bytes
  double large_gbps = -1;  // median all-reduce of 4 MiB, payload per second
  std::string how;         // Communicator::Describe()
};

// The step's report: a pass line or the list of bad nodes, the network
// line, and one line per node that had no GPU to check. Every line starts
// with "dist-train: preflight: " or two spaces (a node's reason).
std::string PreflightReport(const std::vector<NodeProbe>& probes,
                            const PreflightScore& score,
                            const NetworkResult& net);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_HEALTH_PREFLIGHT_SCORE_H_
