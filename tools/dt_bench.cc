// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// dt-bench: all-reduce bandwidth in the style of nccl-tests, and the time
// from process start to a ready communicator. Run one per rank (srun
// --dist-train, dt-run, or with torchrun's variables).
//   algbw = bytes / time; busbw = algbw * 2 (n - 1) / n.
// Every size is checked; a wrong result makes the exit code 1.

#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "dist_train/runtime.h"

namespace {

// Seconds since this process started (/proc/self/stat field 22).
double SinceProcessStart() {
  std::ifstream f("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(f)),
                   std::istreambuf_iterator<char>());
  size_t pos = stat.rfind(')');
  long long start_ticks = 0;
  std::string field;
  int index = 3;  // the field we are in: 3 (state) right after ") "
  for (size_t i = pos + 2; i < stat.size() && index < 22; ++i) {
    if (stat[i] == ' ') {
      ++index;
      if (index == 22) start_ticks = std::atoll(stat.c_str() + i + 1);
    }
  }
  timespec up;
  clock_gettime(CLOCK_BOOTTIME, &up);
  return up.tv_sec + up.tv_nsec / 1e9 -
         static_cast<double>(start_ticks) / sysconf(_SC_CLK_TCK);
}

int Failed(const dist_train::Status& s) {
  fprintf(stderr, "dt-bench: %s\n", s.ToString().c_str());
  return 1;
}

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t min_bytes = 4 << 10, max_bytes = 256 << 20;
  int iters = 5, warmup = 2;
  bool first = false;
  CLI::App app{
      "dt-bench: all-reduce (float32, sum) bus bandwidth and rendezvous time"};
  app.set_version_flag("--version", DT_VERSION);
  app.add_option("-b,--min-bytes", min_bytes, "smallest size (default 4 KiB)");
  app.add_option("-e,--max-bytes", max_bytes, "largest size (default 256 MiB)");
  app.add_option("-n,--iters", iters, "timed iterations per size")
      ->check(CLI::Range(1, 100000));
  app.add_flag("--first", first,
               "rendezvous, one 4-byte all-reduce, print the Unix time it "
               "completed (rank 0), exit");
  app.add_option("-w,--warmup", warmup, "untimed iterations per size")
      ->check(CLI::Range(0, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  std::unique_ptr<dist_train::Communicator> comm;
  dist_train::Status s =
      dist_train::Communicator::Create(dist_train::Options(), &comm);
  double ready = SinceProcessStart();
  if (!s.ok()) {
    fprintf(stderr, "dt-bench: %s\n", s.ToString().c_str());
    return 1;
  }
  const int n = comm->size(), r = comm->rank();
  if (first) {
    float one = 1;
    s = comm->AllReduce(&one, &one, 1, dist_train::DataType::kFloat32,
                        dist_train::ReduceOp::kSum);
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (r == 0)
      printf("first all-reduce done at %.6f (sum %g)\n",
             now.tv_sec + now.tv_nsec / 1e9, one);
    return s.ok() && one == n ? 0 : 1;
  }
  double slowest = ready;
  s = comm->AllReduce(&ready, &slowest, 1, dist_train::DataType::kFloat64,
                      dist_train::ReduceOp::kMax);
  if (!s.ok()) return Failed(s);
  if (r == 0) {
    printf(
        "# dt-bench: %d ranks; process start to communicator ready: %.3f s "
        "(slowest rank)\n# transport: %s\n",
        n, slowest, comm->Describe().c_str());
    printf("# %12s %10s %12s %12s %8s\n", "size(B)", "time(us)", "algbw(GB/s)",
           "busbw(GB/s)", "#wrong");
  }
  int wrong_total = 0;
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    size_t count = bytes / sizeof(float);
    std::vector<float> buf(count);
    double t = 0;
    for (int it = 0; it < warmup + iters; ++it) {
      for (size_t i = 0; i < count; ++i)
        buf[i] = static_cast<float>((r + 1) * (i % 13));
      s = comm->Barrier();
      if (!s.ok()) return Failed(s);
      double t0 = Now();
      s = comm->AllReduce(buf.data(), buf.data(), count,
                          dist_train::DataType::kFloat32,
                          dist_train::ReduceOp::kSum);
      if (it >= warmup) t += Now() - t0;
      if (!s.ok()) return Failed(s);
    }
    int wrong = 0;
    float factor = static_cast<float>(n * (n + 1) / 2);
    for (size_t i = 0; i < count; ++i)
      wrong += buf[i] != factor * static_cast<float>(i % 13);
    int all_wrong = 0;
    s = comm->AllReduce(&wrong, &all_wrong, 1, dist_train::DataType::kInt32,
                        dist_train::ReduceOp::kSum);
    if (!s.ok()) return Failed(s);
    double worst = t / iters, mean_t = 0;
    s = comm->AllReduce(&worst, &mean_t, 1, dist_train::DataType::kFloat64,
                        dist_train::ReduceOp::kMax);
    if (!s.ok()) return Failed(s);
    double algbw = bytes / mean_t / 1e9, busbw = algbw * 2 * (n - 1) / n;
    if (r == 0)
      printf("  %12zu %10.2f %12.3f %12.3f %8d\n", bytes, mean_t * 1e6, algbw,
             busbw, all_wrong);
    wrong_total += all_wrong;
  }
  fflush(stdout);
  return wrong_total == 0 ? 0 : 1;
}
