// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// What preflight (health/preflight.h) measures on one node before the
// training program starts: CPU rate, memory bandwidth, the GPUs the task
// was bound to, and the network interface its traffic leaves from. Each
// measurement is bounded in time; the readers of sysfs take a root so that
// tests run them against recorded trees.

#ifndef DIST_TRAIN_LIB_HEALTH_NODE_PROBE_H_
#define DIST_TRAIN_LIB_HEALTH_NODE_PROBE_H_

#include <string>

#include "base/env.h"
#include "dist_train/status.h"

namespace dist_train {

// One node's measurements. -1: not measured (no such device, or unknown).
struct NodeProbe {
  std::string host;
  double cpu_gflops = -1;  // double-precision multiply-adds, one core
  double mem_gbps = -1;    // memcpy, bytes read + written per second
  int gpus_expected = -1;  // devices in CUDA_VISIBLE_DEVICES; -1: none set
  int gpus_found = -1;     // devices CUDA sees; -1: not checked
  std::string nic;         // the interface toward MASTER_ADDR ("" unknown)
  bool nic_up = true;      // operstate up (or unknown, as for veth and lo)
  std::string nic_state;   // operstate as read
  int nic_speed_mbps = -1;
};

// One core's double-precision multiply-add rate (GFLOP/s) over `seconds`
// of wall time: a throttled or oversubscribed node measures less.
double MeasureCpuRate(double seconds);

// memcpy bandwidth (GB/s, bytes read + written) over `seconds`.
double MeasureMemoryBandwidth(double seconds);

// The number of devices in a CUDA_VISIBLE_DEVICES value ("" and "-1"
// and "NoDevFiles" are none); -1 when `value` is null (not set).
int VisibleDeviceCount(const std::string* value);

// operstate and speed of interface `name` under `sys_class_net`
// (/sys/class/net): up when operstate is "up" or "unknown" (loopback and
// some virtual links say unknown). A missing interface is an error.
Status ReadLink(const std::string& sys_class_net, const std::string& name,
                NodeProbe* probe);

// The interface of this network namespace whose address traffic to `host`
// leaves from (a UDP socket's route, no packet sent); "" when unknown.
std::string RouteInterface(const std::string& host);

// The interface NCCL_SOCKET_IFNAME names exactly ("=eth0" or "eth0", one
// name, no '^' exclusion); "" otherwise.
std::string NamedSocketInterface(const std::string* value);

// Everything above for this node, as the task's environment `env` sees it:
// the GPU count, the interface (NCCL_SOCKET_IFNAME's, else the route to
// MASTER_ADDR) and `seconds` each for CPU and memory.
NodeProbe ProbeNode(const EnvMap& env, double seconds);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_HEALTH_NODE_PROBE_H_
