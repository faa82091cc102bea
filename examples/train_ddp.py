#!/usr/bin/python3
"""A small but real data-parallel training job: every rank trains the same
linear model on its own shard of synthetic data with PyTorch DDP over Gloo,
wired only by the dist-train env contract (no flags, no hostname parsing).
Rank 0 reports the loss; at the end all ranks check they hold identical
weights."""
import datetime
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

env = {k: os.environ.get(k, "-") for k in
       ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK",
        "MASTER_ADDR", "MASTER_PORT", "OMP_NUM_THREADS")}
print("wiring %-6s rank %s/%s local %s/%s node %s master %s:%s omp %s" %
      (socket.gethostname(), env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"],
       env["LOCAL_WORLD_SIZE"], env["NODE_RANK"], env["MASTER_ADDR"],
       env["MASTER_PORT"], env["OMP_NUM_THREADS"]), flush=True)

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()

torch.manual_seed(0)
true_w = torch.tensor([[2.0], [-3.0], [0.5]])
gen = torch.Generator().manual_seed(1000 + rank)  # each rank its own shard
model = DDP(torch.nn.Linear(3, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(60):
    x = torch.randn(64, 3, generator=gen)
    y = x @ true_w + 1.0
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0 and step % 20 == 0:
        print("step %2d loss %.5f" % (step, loss.item()), flush=True)

w = torch.cat([p.detach().flatten() for p in model.parameters()])
lo, hi = w.clone(), w.clone()
dist.all_reduce(lo, op=dist.ReduceOp.MIN)
dist.all_reduce(hi, op=dist.ReduceOp.MAX)
same = bool(torch.equal(lo, hi))
if rank == 0:
    print("final loss %.6f, weights %s, identical on all %d ranks: %s" %
          (loss.item(), [round(v, 3) for v in w.tolist()], world, same), flush=True)
dist.destroy_process_group()
raise SystemExit(0 if same and loss.item() < 1e-3 else 1)
