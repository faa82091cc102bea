// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Open MPI's side of bench/runtime_vs_mpi.sh: MPI_Allreduce (float, sum)
// timed exactly like dt-bench times dist-train's (a barrier before every
// call, the mean over the timed calls, the slowest rank's), with the same
// output columns and the same check of every element.
//   mpi_allreduce MIN_BYTES MAX_BYTES ITERS WARMUP

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: mpi_allreduce MIN MAX ITERS WARMUP\n");
    MPI_Finalize();
    return 2;
  }
  size_t min_bytes = strtoull(argv[1], NULL, 10), max_bytes = strtoull(argv[2], NULL, 10);
  int iters = atoi(argv[3]), warmup = atoi(argv[4]);
  if (rank == 0) printf("# %12s %10s %12s %12s %8s\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    size_t count = bytes / sizeof(float);
    float* buf = malloc(count * sizeof(float) + 1);
    double t = 0;
    for (int it = 0; it < warmup + iters; ++it) {
      for (size_t i = 0; i < count; ++i) buf[i] = (float)((rank + 1) * (i % 13));
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      if (it >= warmup) t += MPI_Wtime() - t0;
    }
    int wrong = 0, all_wrong = 0;
    float factor = (float)(n * (n + 1) / 2);
    for (size_t i = 0; i < count; ++i) wrong += buf[i] != factor * (float)(i % 13);
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double mean = t / iters, worst = 0;
    MPI_Allreduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
      double alg = bytes / worst / 1e9;
      printf("  %12zu %10.2f %12.3f %12.3f %8d\n", bytes, worst * 1e6, alg, alg * 2.0 * (n - 1) / n, all_wrong);
    }
    free(buf);
  }
  MPI_Finalize();
  return 0;
}
