#!/usr/bin/python3
"""All-reduce busbw of PyTorch + Gloo (the peer of dt-bench) for one size."""
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
n, r = dist.get_world_size(), dist.get_rank()
size = int(sys.argv[1]) if len(sys.argv) > 1 else 64 << 20
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 5
t = torch.ones(size // 4)
dist.all_reduce(t)  # warm-up
dist.barrier()
start = time.time()
for _ in range(iters):
    dist.all_reduce(t)
elapsed = (time.time() - start) / iters
slowest = torch.tensor([elapsed], dtype=torch.float64)
dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
if r == 0:
    algbw = size / slowest.item() / 1e9
    print("gloo %d ranks %d bytes: %.1f us, algbw %.3f GB/s, busbw %.3f GB/s"
          % (n, size, slowest.item() * 1e6, algbw, algbw * 2 * (n - 1) / n), flush=True)
dist.destroy_process_group()
