#!/usr/bin/python3
"""An unchanged PyTorch DDP loop plus the one line that gives it the hang
watchdog and the straggler report (tests/e2e/straggler.bats). The model's
forward pass takes STEP_MS (SLOW_RANK's: SLOW_PERCENT more), as a slower
GPU or CPU would make it."""
import datetime
import os
import sys
import time

import torch
import dist_train; dist_train.install_watchdog()  # noqa: E401,E702  the one line
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

steps, step_ms = int(sys.argv[1]), float(sys.argv[2])
slow_rank, slow_percent = int(sys.argv[3]), float(sys.argv[4])
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
rank = dist.get_rank()
pause = step_ms / 1000 * (1 + slow_percent / 100 if rank == slow_rank else 1)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 1)

    def forward(self, x):
        time.sleep(pause)
        return self.lin(x)


model = DDP(Model())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(rank)
for step in range(steps):
    x = torch.randn(64, 3, generator=gen)
    loss = torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print("done %d steps" % steps, flush=True)
dist.destroy_process_group()
