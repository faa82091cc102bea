// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The dist-train worker runtime: turns the wiring a training process was
// started with (the dist-train plugin or dt-run, torchrun, Kubeflow, or
// plain Slurm) into an authenticated communicator with CPU collectives.
//
//   dist_train::Options options;                // everything from the env
//   std::unique_ptr<dist_train::Communicator> comm;
//   dist_train::Status s = dist_train::Communicator::Create(options, &comm);
//   if (!s.ok()) { fprintf(stderr, "%s\n", s.ToString().c_str()); return 1; }
//   s = comm->AllReduce(grad, grad, n, dist_train::DataType::kFloat32,
//                       dist_train::ReduceOp::kAvg);
//
// Thread-safety: a Communicator is used by one thread at a time. Every
// blocking call has a deadline (Options::timeout_seconds); when any rank
// fails, the others' current or next call returns an error that names it.

#ifndef DIST_TRAIN_RUNTIME_H_
#define DIST_TRAIN_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dist_train/export.h"
#include "dist_train/status.h"

namespace dist_train {

class CommunicatorImpl;  // the library's own (lib/runtime/communicator_impl.h)

enum class DataType { kFloat32, kFloat64, kInt32, kInt64, kBFloat16, kFloat16 };
enum class ReduceOp { kSum, kMin, kMax, kAvg };

// Size in bytes of one element.
DT_EXPORT size_t DataTypeSize(DataType type);

// Explicit settings; every field left at its default is taken from the
// environment (see docs/runtime.md for the variables and their order).
struct Options {
  int rank = -1;            // default: RANK, else SLURM_PROCID
  int world_size = -1;      // default: WORLD_SIZE, else SLURM_NTASKS
  std::string master_addr;  // default: MASTER_ADDR
  int master_port = 0;      // default: MASTER_PORT
  // Per-job secret; default: DT_JOB_TOKEN. Empty: unauthenticated, and a
  // peer that has a secret refuses us.
  std::string job_token;
  // Who may join: peers must present the same identity. Default: the
  // Slurm job and step (SLURM_JOB_ID.SLURM_STEP_ID), else MASTER_ADDR:PORT.
  std::string job_identity;
  // Every wait (connect, handshake, collective) ends in an error after
  // this long. Default 300 s; DT_TIMEOUT overrides it.
  double timeout_seconds = 300;
  // When MASTER_PORT is taken, rank 0 and the others try the next ports,
  // in order, this many in all.
  int port_candidates = 8;
  // The local IPv4 address this rank's connections leave from, and so the
  // one peers reach it at (multi-homed nodes: pick the training network).
  // Default: DT_SOCKET_ADDR, else whatever the routing table chooses.
  std::string local_addr;
};

class DT_EXPORT Communicator {
 public:
  // Rendezvous with every rank and connect the ring. Errors name the
  // variable that was wrong or the peer that failed.
  static Status Create(const Options& options,
                       std::unique_ptr<Communicator>* out);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;
  // How host-memory collectives travel, e.g. "tcp ring (4 ranks)",
  // "shared memory (8 ranks)" or "shared memory within 2 machines, tcp ring
  // between them" (all-reduce).
  std::string Describe() const;

  // In place when send == recv. `count` elements.
  Status AllReduce(const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op);
  Status Broadcast(void* buf, size_t count, DataType type, int root);
  // recv holds size() * count elements, rank r's at r * count.
  Status AllGather(const void* send, void* recv, size_t count, DataType type);
  // send holds size() * count elements; recv gets this rank's reduced slice.
  Status ReduceScatter(const void* send, void* recv, size_t count,
                       DataType type, ReduceOp op);
  Status Barrier();

 private:
  explicit Communicator(std::unique_ptr<CommunicatorImpl> impl);
  std::unique_ptr<CommunicatorImpl> impl_;
};

// Progress for the hang watchdog (DT_WATCHDOG=SECONDS, docs/runtime.md
// "Hang watchdog"): every collective counts already; a program that
// spends longer than that between collectives calls this once per step.
// Cheap (one relaxed atomic add), thread-safe, a no-op without a watchdog.
DT_EXPORT void Heartbeat();

// Compute time the program measured itself (e.g. a forward pass), for the
// watchdog's straggler report ("Stragglers"): once a program reports any,
// the report compares this instead of the time outside collectives.
DT_EXPORT void ReportComputeTime(uint64_t nanoseconds);

}  // namespace dist_train

#endif  // DIST_TRAIN_RUNTIME_H_
