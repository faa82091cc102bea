#!/usr/bin/python3
"""A real rendezvous over the contract: torch.distributed with Gloo,
initialised from the environment only (MASTER_ADDR/PORT, RANK, WORLD_SIZE),
one all-reduce of (rank + 1); prints the sum and checks it."""
import datetime
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://",
                        timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
assert rank == int(os.environ["RANK"]) and world == int(os.environ["WORLD_SIZE"])
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
want = world * (world + 1) / 2
print("rank %d/%d allreduce sum %g (want %g) %s" %
      (rank, world, t.item(), want, "OK" if t.item() == want else "WRONG"), flush=True)
dist.destroy_process_group()
raise SystemExit(0 if t.item() == want else 1)
