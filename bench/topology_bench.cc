// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// What the plugin does once per step per node, on a 16-GPU topology:
// load the topology and plan every local rank. Peers measured in the same
// run: live hwloc discovery of this machine (what a plugin without the
// slurmd-written XML cache would pay per step), and loading the same
// machine from that cache; and the node model slurmd saves beside the
// cache (what a step loads now), for the same 16-GPU topology.
//
//   make bench      (prints the ratios at the end)

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <string>

#include "binding/binding.h"
#include "binding/model_cache.h"
#include "binding/topology.h"

namespace dist_train {
namespace {

const std::string kSixteen =
    std::string(DT_SOURCE_DIR) + "/tests/fixtures/dgx2-16gpu.xml";

std::string CachePath() {
  static const std::string path = [] {
    std::string p =
        "/tmp/dt-bench-topology-" + std::to_string(getpid()) + ".xml";
    if (!SaveTopologyXml(p).ok()) abort();
    return p;
  }();
  return path;
}

void BM_LoadLiveDiscovery(benchmark::State& state) {
  for (auto _ : state) {
    NodeModel m;
    if (!LoadNodeModel("", &m).ok()) state.SkipWithError("live load failed");
    benchmark::DoNotOptimize(m);
  }
}

void BM_LoadThisMachineFromXmlCache(benchmark::State& state) {
  std::string path = CachePath();
  for (auto _ : state) {
    NodeModel m;
    if (!LoadNodeModel(path, &m).ok()) state.SkipWithError("xml load failed");
    benchmark::DoNotOptimize(m);
  }
}

void BM_Load16GpuXml(benchmark::State& state) {
  for (auto _ : state) {
    NodeModel m;
    if (!LoadNodeModel(kSixteen, &m).ok())
      state.SkipWithError("xml load failed");
    benchmark::DoNotOptimize(m);
  }
}

// The 16-GPU XML copied to /tmp with its model saved beside it (root
// only: the loader wants root's files).
void BM_Load16GpuSavedModel(benchmark::State& state) {
  std::string path = "/tmp/dt-bench-model-" + std::to_string(getpid()) + ".xml";
  std::string cmd = "cp " + kSixteen + " " + path;
  if (system(cmd.c_str()) != 0 || !SaveNodeModelCache(path).ok()) {
    state.SkipWithError("cannot save the model (run as root)");
    return;
  }
  for (auto _ : state) {
    NodeModel m;
    if (!LoadNodeModelCache(path, &m).ok())
      state.SkipWithError("model load failed");
    benchmark::DoNotOptimize(m);
  }
  unlink(path.c_str());
  unlink(ModelCachePath(path).c_str());
}

void BM_Plan16GpuNode(benchmark::State& state) {
  NodeModel m;
  if (!LoadNodeModel(kSixteen, &m).ok()) abort();
  BindRequest req;
  req.ntasks = static_cast<uint32_t>(state.range(0));
  for (auto _ : state) {
    BindPlan plan;
    if (!PlanBinding(m, req, &plan).ok()) state.SkipWithError("plan failed");
    benchmark::DoNotOptimize(plan);
  }
}

BENCHMARK(BM_LoadLiveDiscovery)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadThisMachineFromXmlCache)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Load16GpuXml)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Load16GpuSavedModel)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Plan16GpuNode)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace dist_train

BENCHMARK_MAIN();
