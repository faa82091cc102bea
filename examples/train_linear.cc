// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// A small data-parallel trainer in plain C++ on dist-train's CPU backend:
// linear regression y = w.x + b on synthetic, learnable data. Every step
// the global batch is split across the ranks, each computes the gradient
// of its shard, and the gradients are averaged with one all-reduce, so the
// result with N ranks equals the 1-rank result up to rounding.
//
//   g++ -O2 train_linear.cc $(pkg-config --cflags --libs dist-train)
//   srun --dist-train ./a.out          (or dt-run --nproc 4 -- ./a.out)

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "dist_train/runtime.h"

namespace {

constexpr int kFeatures = 8;
constexpr int kGlobalBatch = 240;  // divisible by 1..6, 8, 10, 12
constexpr int kSteps = 200;
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

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 42;
  std::unique_ptr<dist_train::Communicator> comm;
  dist_train::Status s =
      dist_train::Communicator::Create(dist_train::Options(), &comm);
  if (!s.ok()) {
    fprintf(stderr, "train_linear: %s\n", s.ToString().c_str());
    return 1;
  }
  const int n = comm->size(), r = comm->rank();
  if (kGlobalBatch % n != 0) {
    fprintf(stderr, "train_linear: %d ranks do not divide the batch of %d\n", n,
            kGlobalBatch);
    return 1;
  }
  std::vector<double> w(kFeatures + 1, 0.0),
      grad(kFeatures + 2);  // + bias, + loss
  for (int step = 0; step < kSteps; ++step) {
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
    if (!s.ok()) {
      fprintf(stderr, "train_linear: rank %d step %d: %s\n", r, step,
              s.ToString().c_str());
      return 1;
    }
    for (int k = 0; k <= kFeatures; ++k) w[k] -= kLearningRate * grad[k];
    if (r == 0 && (step % 50 == 0 || step == kSteps - 1))
      printf("step %3d loss %.8f\n", step, grad[kFeatures + 1]);
  }
  if (r == 0) {
    printf("weights");
    for (double v : w) printf(" %.12f", v);
    printf("\n");
  }
  return 0;
}
