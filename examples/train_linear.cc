// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// A small data-parallel trainer in plain C++ on dist-train's CPU backend:
// linear regression y = w.x + b on synthetic, learnable data. Every step
// the global batch is split across the ranks, each computes the gradient
// of its shard, and the gradients are averaged with one all-reduce, so the
// result with N ranks equals the 1-rank result up to rounding.
//
// Preemption: with DT_CHECKPOINT_DIR set it resumes from the latest complete
// checkpoint there, and on a warning signal (USR1, or DT_PREEMPT_SIGNAL) all
// ranks stop after the same step, checkpoint, requeue the job and exit 75;
// with CHECKPOINT_EVERY > 0 it also checkpoints every that many steps.
// A resumed run ends with the same weights, bit for bit, as one that was
// never interrupted (the data of step s depends only on the seed and s).
//
// Each step is one heartbeat for the hang watchdog and its straggler
// report; TRAIN_LINEAR_SLOW=RANK:PERCENT makes that rank's STEP_MS that
// much longer (a straggler, for tests and demos).
//
//   g++ -O2 train_linear.cc $(pkg-config --cflags --libs dist-train)
//   srun --dist-train ./a.out [SEED [STEPS [STEP_MS [CHECKPOINT_EVERY]]]]
//   dt-run --nproc 4 -- ./a.out

#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dist_train/preemption.h"
#include "dist_train/runtime.h"

namespace {

constexpr int kFeatures = 8;
constexpr int kGlobalBatch = 240;  // divisible by 1..6, 8, 10, 12
constexpr double kLearningRate = 0.05;

// Deterministic sample `i` of step `step` (independent of the rank count).
double Noise(uint64_t seed, uint64_t step, uint64_t i, uint64_t k) {
  uint64_t z = seed ^ (step * 0x9e3779b97f4a7c15ull) ^
               (i * 0xbf58476d1ce4e5b9ull) ^ (k * 0x94d049bb133111ebull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 * 2 - 1;  // [-1, 1)
}

struct Sample {
  double x[kFeatures];
  double y;
};

Sample MakeSample(uint64_t seed, int step, int i) {
  Sample s;
  s.y = 0.5;  // true bias
  for (int k = 0; k < kFeatures; ++k) {
    s.x[k] = Noise(seed, step, i, k);
    s.y += (k + 1) * 0.25 * s.x[k];  // true weights 0.25, 0.5, ...
  }
  s.y += 0.01 * Noise(seed, step, i, 99);
  return s;
}

int Fail(int rank, const char* what, const dist_train::Status& s) {
  fprintf(stderr, "train_linear: rank %d: %s: %s\n", rank, what,
          s.ToString().c_str());
  return 1;
}

std::string Bytes(const std::vector<double>& w) {
  return std::string(reinterpret_cast<const char*>(w.data()),
                     w.size() * sizeof(double));
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they happen
  uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 42;
  int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  int step_ms = argc > 3 ? std::atoi(argv[3]) : 0;  // slow it down for demos
  int every = argc > 4 ? std::atoi(argv[4]) : 0;
  int slow_rank = -1, slow_percent = 0;
  if (const char* slow = getenv("TRAIN_LINEAR_SLOW")) {
    if (sscanf(slow, "%d:%d", &slow_rank, &slow_percent) != 2 ||
        slow_percent < 0) {
      fprintf(stderr,
              "train_linear: TRAIN_LINEAR_SLOW=%s is not RANK:PERCENT\n", slow);
      return 2;
    }
  }
  std::unique_ptr<dist_train::Communicator> comm;
  dist_train::Status s =
      dist_train::Communicator::Create(dist_train::Options(), &comm);
  if (!s.ok()) return Fail(-1, "init", s);
  const int n = comm->size(), r = comm->rank();
  if (kGlobalBatch % n != 0) {
    fprintf(stderr, "train_linear: %d ranks do not divide the batch of %d\n", n,
            kGlobalBatch);
    return 1;
  }
  std::vector<double> w(kFeatures + 1, 0.0),
      grad(kFeatures + 2);  // + bias, + loss
  const char* dir_env = getenv("DT_CHECKPOINT_DIR");
  const std::string ckpt = dir_env != nullptr ? dir_env : "";
  int start = 0;
  if (!ckpt.empty()) {
    s = dist_train::InstallStopHandler();
    if (!s.ok()) return Fail(r, "stop handler", s);
    uint64_t step = 0;
    std::string state;
    s = dist_train::LoadLatestCheckpoint(ckpt, r, &step, &state);
    if (s.ok() && state.size() == w.size() * sizeof(double)) {
      memcpy(w.data(), state.data(), state.size());
      start = static_cast<int>(step);
      if (r == 0) printf("resumed from the checkpoint of step %d\n", start);
    } else if (s.ok()) {
      fprintf(stderr,
              "train_linear: rank %d: checkpoint of step %" PRIu64
              " holds %zu bytes, expected %zu\n",
              r, step, state.size(), w.size() * sizeof(double));
      return 1;
    } else if (s.code() != dist_train::Status::Code::kNotFound) {
      return Fail(r, "resume", s);
    }
  }
  for (int step = start; step < steps; ++step) {
    std::fill(grad.begin(), grad.end(), 0.0);
    for (int i = r * kGlobalBatch / n; i < (r + 1) * kGlobalBatch / n; ++i) {
      Sample smp = MakeSample(seed, step, i);
      double pred = w[kFeatures];
      for (int k = 0; k < kFeatures; ++k) pred += w[k] * smp.x[k];
      double err = pred - smp.y;
      for (int k = 0; k < kFeatures; ++k)
        grad[k] += 2 * err * smp.x[k] / kGlobalBatch;
      grad[kFeatures] += 2 * err / kGlobalBatch;
      grad[kFeatures + 1] += err * err / kGlobalBatch;
    }
    s = comm->AllReduce(grad.data(), grad.data(), grad.size(),
                        dist_train::DataType::kFloat64,
                        dist_train::ReduceOp::kSum);
    if (!s.ok()) return Fail(r, ("step " + std::to_string(step)).c_str(), s);
    for (int k = 0; k <= kFeatures; ++k) w[k] -= kLearningRate * grad[k];
    if (r == 0 && (step % 50 == 0 || step == steps - 1))
      printf("step %3d loss %.8f\n", step, grad[kFeatures + 1]);
    if (step_ms > 0)
      usleep(step_ms * (r == slow_rank ? 1000 + 10 * slow_percent : 1000));
    dist_train::Heartbeat();
    if (ckpt.empty()) continue;
    bool stop = false;
    s = dist_train::AgreeToStop(comm.get(), &stop);
    if (!s.ok()) return Fail(r, "stop agreement", s);
    bool periodic = every > 0 && (step + 1) % every == 0;
    if (step + 1 == steps || !(stop || periodic)) continue;
    s = dist_train::SaveCheckpoint(comm.get(), ckpt, step + 1, Bytes(w));
    if (!s.ok()) return Fail(r, "checkpoint", s);
    if (!stop) continue;
    // Say it before requeueing: Slurm ends the job right after the requeue.
    if (r == 0) {
      printf("preemption warning: checkpoint of step %d saved\n", step + 1);
      fflush(stdout);
    }
    int32_t requeued = 0;
    dist_train::Status rq;
    if (r == 0) {
      rq = dist_train::RequeueJob();
      requeued = rq.ok();
      // At once, for the same reason (maybe before the broadcast returns).
      if (requeued) printf("job requeued; stopping (exit 75)\n");
      fflush(stdout);
    }
    s = comm->Broadcast(&requeued, 1, dist_train::DataType::kInt32, 0);
    if (!s.ok()) return Fail(r, "requeue decision", s);
    if (requeued) return dist_train::kPreemptedExitCode;
    if (r == 0) printf("no requeue (%s): training on\n", rq.message().c_str());
    dist_train::ClearStopRequest();
  }
  if (r == 0) {
    printf("weights");
    for (double v : w) printf(" %.12f", v);
    printf("\nweights-hex");
    for (double v : w) printf(" %a", v);
    printf("\n");
  }
  return 0;
}
