#!/usr/bin/python3
"""The PyTorch peer of `dt-bench --first`: rendezvous from the env contract,
one all-reduce (Gloo), rank 0 prints the Unix time it completed."""
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.ones(1)
dist.all_reduce(t)
if dist.get_rank() == 0:
    print("first all-reduce done at %.6f (sum %g)" % (time.time(), t.item()), flush=True)
dist.destroy_process_group()
