// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The binding planner: a node model + the step's allocation in, one plan
// per local rank out (its GPUs, nearest NICs, a CPU share, NUMA nodes).
// Pure: the plugin, dt-run, dt-topo and the tests all call exactly this.
//
// Rules (docs/binding.md explains each choice):
//  - GPUs: the step's GPUs in PCI bus order. k GPUs per rank: the
//    request's gpus_per_task, else 1 when ranks >= GPUs, else GPUs / ranks;
//    rank i gets the contiguous block of slots i*k .. i*k+k-1 (mod n: more
//    ranks than GPUs share round-robin); none: CPU only. GPUs in no rank's
//    block give a warning that names them.
//  - NIC: per GPU of a rank: best tier first (RDMA > fabric Ethernet >
//    management Ethernet), then smallest tree distance to that GPU (to the
//    rank's CPUs' locality when CPU-only); ties go round-robin, in bus
//    order, to the GPUs with the same candidate set, in local-rank order.
//    A rank's NICs are the distinct ones of its GPUs, best first.
//  - CPUs: each GPU's local CPUs intersected with the step's CPUs; ranks
//    whose domains are equal split it into disjoint, equal, whole-core
//    shares in proportion to their GPUs there (exclusive), or each take it
//    all (domain), or no binding. A rank's CPUs: the union of its shares.
//  - NUMA: the NUMA nodes holding the rank's CPUs (or its GPUs' locality).

#ifndef DIST_TRAIN_LIB_BINDING_BINDING_H_
#define DIST_TRAIN_LIB_BINDING_BINDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "binding/bind_parts.h"
#include "binding/node_model.h"
#include "dist_train/status.h"

namespace dist_train {

struct BindRequest {
  uint32_t ntasks = 1;  // local ranks on this node
  // GPUs each rank drives (Slurm's --gpus-per-task); 0 = not said: one per
  // rank, or the step's GPUs divided among fewer ranks.
  uint32_t gpus_per_task = 0;
  // The step's GPUs as positions in the node's bus-ordered GPU list;
  // unset = all GPUs of the node (Slurm manages none).
  std::optional<std::vector<int>> gpus;
  // The step's CPUs (OS PU indexes); unset = every allowed PU.
  std::optional<std::vector<int>> cpus;
  BindParts parts;
};

struct RankPlan {
  uint32_t local_rank = 0;
  int64_t rank = -1;      // its global rank when the caller knows it, else -1
  int gpu = -1;           // its first GPU: index into NodeModel::gpus, -1: none
  int gpu_slot = -1;      // position of that GPU in BindPlan::step_gpus
  int nic = -1;           // its best NIC: index into NodeModel::nics, -1: none
  std::vector<int> gpus;  // all its GPUs (NodeModel::gpus), bus order
  std::vector<int> gpu_slots;  // their positions in BindPlan::step_gpus
  std::vector<int> nics;       // its NICs (NodeModel::nics), best first
  std::vector<int> cpus;       // PU OS indexes; empty: not bound
  int cores = 0;               // whole cores in `cpus` (0 when shared PUs)
  std::vector<int> numa;       // NUMA node OS indexes
};

struct BindPlan {
  std::vector<int> step_gpus;  // indexes into NodeModel::gpus, bus order
  std::vector<RankPlan> ranks;
  std::vector<std::string> warnings;
};

Status PlanBinding(const NodeModel& model, const BindRequest& request,
                   BindPlan* plan);

// The most indices one list may name, counted before anything is expanded
// (ranges by their size, repeats included): "0-1048576" 100 times would
// otherwise cost slurmstepd 17 s and 514 MiB. No node has that many PUs.
constexpr uint64_t kMaxIndexListEntries = 65536;

// Parses "0,2-3" style index lists (Slurm's SLURM_STEP_GPUS, S_*_ALLOC_CORES
// and cpu lists), each index at most 1048576 and the whole list at most
// kMaxIndexListEntries indices. `what` names the source in errors.
Status ParseIndexList(std::string_view text, const char* what,
                      std::vector<int>* out);

// "0-3,8,10-11".
std::string FormatIndexList(const std::vector<int>& sorted);

// Positions in model.gpus of the GPUs named by PCI bus id, comma-separated
// ("0000:1a:00.0,0000:3a:00.0", as DT_GPUS lists a task's GPUs); a bus id
// not on this node is an error naming `what` and the id.
Status GpuPositions(const NodeModel& model, std::string_view bus_ids,
                    const char* what, std::vector<int>* out);

// Parses Slurm's SLURM_GPUS_PER_TASK: "[type:]count", several comma-separated
// for several types (summed), each count 1..4096. `what` names the source.
Status ParseGpusPerTask(std::string_view text, const char* what, uint32_t* out);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_BINDING_H_
