#!/usr/bin/python3
"""PyTorch + Gloo's side of bench/cluster_vs_mpi.sh: all_reduce (float32,
sum) timed exactly like dt-bench and mpi_allreduce.c time theirs (a barrier
before every call, the mean over the timed calls, the slowest rank's), with
the same output columns and the same check of every element. Reads the
torchrun variables (MASTER_ADDR, RANK, ...) that srun --dist-train exports.
  gloo_allreduce.py MIN_BYTES MAX_BYTES ITERS WARMUP"""
import sys
import time

import torch
import torch.distributed as dist


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: gloo_allreduce.py MIN_BYTES MAX_BYTES ITERS WARMUP")
    lo, hi, iters, warmup = (int(a) for a in sys.argv[1:])
    dist.init_process_group("gloo")
    n, rank = dist.get_world_size(), dist.get_rank()
    if rank == 0:
        print("# %12s %10s %12s %12s %8s"
              % ("size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong"), flush=True)
    size = lo
    while size <= hi:
        pattern = (torch.arange(size // 4) % 13).float()
        buf = torch.empty_like(pattern)
        total = 0.0
        for it in range(warmup + iters):
            buf.copy_(pattern).mul_(rank + 1)
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(buf)
            if it >= warmup:
                total += time.perf_counter() - start
        wrong = torch.tensor([int((buf != pattern * (n * (n + 1) // 2)).sum())])
        dist.all_reduce(wrong)
        worst = torch.tensor([total / iters], dtype=torch.float64)
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        if rank == 0:
            alg = size / worst.item() / 1e9
            print("  %12d %10.2f %12.3f %12.3f %8d"
                  % (size, worst.item() * 1e6, alg, alg * 2 * (n - 1) / n, wrong.item()), flush=True)
        size *= 2
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
