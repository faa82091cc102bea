#!/usr/bin/python3
"""A real rendezvous over the contract: torch.distributed with Gloo,
initialised from the environment only (MASTER_ADDR/PORT, RANK, WORLD_SIZE),
one all-reduce of (rank + 1); prints the sum and checks it."""
import datetime
import os

import torch
import torch.distributed as dist

# Debian 13+'s torch is built without libuv, which torch >= 2.4 asks for by
# default (docs/user-guide.md). USE_LIBUV=0 reaches env:// stores, but the
# client store of a worker under torchrun ignores it: give it the legacy one.
os.environ.setdefault("USE_LIBUV", "0")
if os.environ["USE_LIBUV"] == "0" and int(torch.__version__.split(".")[0]) >= 2:
    import importlib

    # (not `import ... as`: torch.distributed.rendezvous is also a function)
    rendezvous = importlib.import_module("torch.distributed.rendezvous")
    _TCPStore = rendezvous.TCPStore
    rendezvous.TCPStore = lambda *a, **kw: _TCPStore(*a, **{**kw, "use_libuv": False})

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
