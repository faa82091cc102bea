#!/usr/bin/python3
"""The whole preemption cycle with PyTorch DDP (Gloo) and dist-train.

A small MLP (with dropout) learns a synthetic regression; a
DistributedSampler shuffles the data set anew every epoch, and every rank
adds noise from its own generator to its inputs. With DT_CHECKPOINT_DIR set:

- it resumes from the newest complete checkpoint there, in the middle of
  an epoch: model, optimizer, sampler epoch and position, the global RNG
  (dropout) and the noise generator;
- on the warning signal (USR1, or DT_PREEMPT_SIGNAL) every rank stops after
  the same step, all save that step, rank 0 requeues the job and all exit
  75 (dist_train.PREEMPTED_EXIT_CODE); when the job may not be requeued
  again (DT_MAX_REQUEUES) they train on.

So a run that was stopped and requeued any number of times ends with the
same weights, bit for bit, as one that never was (same seed, same ranks).

    export PYTHONPATH=/path/to/dist-train/python   # unless `make install`ed
    srun --dist-train python3 train_ddp_preempt.py [SEED [EPOCHS [STEP_MS]]]
    srun --dist-train=mode=node --ntasks-per-node=1 dt-run python3 train_ddp_preempt.py

STEP_MS sleeps that long after every step (default: env STEP_MS, else 0), to
make a short run last long enough to be warned."""
from dist_train import preemption

# First, before `import torch` (seconds): a warning that comes earlier is
# remembered instead of killing the process, and the handler only sets a
# flag in C, so no system call of torch is interrupted by it.
preemption.install_stop_handler()

import datetime  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset  # noqa: E402

import dist_train  # noqa: E402
from dist_train import checkpoint  # noqa: E402

SAMPLES = 960  # 240 per rank with 4 ranks
FEATURES = 8
BATCH = 16  # per rank
LOG_EVERY = 5  # steps between rank 0's progress lines


class ResumableSampler(DistributedSampler):
    """A DistributedSampler that can start part way through an epoch: its
    order depends only on (seed, epoch), so skipping the samples already
    trained on resumes exactly where the stopped run was."""

    def __init__(self, dataset, seed):
        super().__init__(dataset, shuffle=True, seed=seed)
        self.skip = 0

    def start_epoch(self, epoch, skip=0):
        self.set_epoch(epoch)
        self.skip = skip

    def __iter__(self):
        order = list(super().__iter__())
        return iter(order[self.skip:])

    def __len__(self):
        return self.num_samples - self.skip


def synthetic_data(seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(SAMPLES, FEATURES, generator=gen)
    w = torch.randn(FEATURES, 1, generator=gen)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(SAMPLES, 1, generator=gen)
    return TensorDataset(x, y)


def make_model(seed):
    torch.manual_seed(seed)  # the same initial weights on every rank
    return torch.nn.Sequential(
        torch.nn.Linear(FEATURES, 16), torch.nn.Tanh(), torch.nn.Dropout(0.1),
        torch.nn.Linear(16, 1))


def say(rank, line):
    if rank == 0:
        print(line, flush=True)


def resume(ckpt_dir, model, opt, noise):
    """Loads the newest complete checkpoint into model, opt, the RNGs.
    Returns (step, epoch, batch) to continue from; zeros when there is none."""
    if ckpt_dir is None:
        return 0, 0, 0
    found = checkpoint.load(ckpt_dir)
    if found is None:
        return 0, 0, 0
    step, state = found
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])
    noise.set_state(state["noise_rng"])
    return step, state["epoch"], state["batch"]


def save(ckpt_dir, step, epoch, batch, model, opt, noise):
    checkpoint.save(step, {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "epoch": epoch,
        "batch": batch,  # batches of this epoch already trained on
        "torch_rng": torch.get_rng_state(),
        "noise_rng": noise.get_state(),
    }, dir=ckpt_dir)


def stop_for_preemption(rank):
    """After a checkpoint on a warning: rank 0 requeues the job; True when
    every rank should exit 75, False when the limit refused: train on."""
    requeued = torch.zeros(1, dtype=torch.int32)
    if rank == 0:
        requeued[0] = int(preemption.requeue())
        # Say it at once: Slurm ends the job right after the requeue, maybe
        # before the broadcast below returns.
        if requeued.item():
            say(rank, "job requeued; stopping (exit %d)" %
                dist_train.PREEMPTED_EXIT_CODE)
    dist.broadcast(requeued, 0)
    if requeued.item():
        return True
    say(rank, "no requeue (the job may not be requeued again): training on")
    preemption.clear_stop_request()
    return False


def report(rank, world, model, loss):
    """Rank 0 prints the final weights exactly (float.hex); every rank
    checks that all hold the same. Returns the exit code."""
    w = torch.cat([p.detach().flatten() for p in model.parameters()])
    lo, hi = w.clone(), w.clone()
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    same = bool(torch.equal(lo, hi))
    say(rank, "final loss %.6f, identical weights on all %d ranks: %s" %
        (loss, world, same))
    say(rank, "weights-hex " + " ".join(float.hex(v) for v in w.tolist()))
    return 0 if same else 1


def train_step(ddp, opt, noise, x, y):
    x = x + 0.01 * torch.randn(x.shape, generator=noise)
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def train(rank, world, seed, epochs, step_ms, ckpt_dir):
    """Trains to the end (returns 0, or 1 when ranks disagree) or until a
    warning stopped it for a requeue (returns 75)."""
    dataset = synthetic_data(seed)
    sampler = ResumableSampler(dataset, seed)
    # The loader gets its own generator: every iter() draws a seed from it,
    # which from the global RNG would shift dropout's random numbers by one
    # draw in a resumed epoch.
    loader = DataLoader(dataset, batch_size=BATCH, sampler=sampler,
                        generator=torch.Generator())
    model = make_model(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    torch.manual_seed(seed * 1000 + rank)  # dropout: each rank its own
    noise = torch.Generator().manual_seed(seed * 1000 + 500 + rank)
    step, start_epoch, start_batch = resume(ckpt_dir, model, opt, noise)
    if step:
        say(rank, "resumed from the checkpoint of step %d (epoch %d, batch %d)"
            % (step, start_epoch, start_batch))
    # find_unused_parameters=True only keeps DDP from reordering its gradient
    # bucket after the first step: a resumed run's first step would then sum
    # in another order than the same step of an uninterrupted run (1 ulp).
    ddp = DDP(model, find_unused_parameters=True)
    steps_per_epoch = len(sampler) // BATCH
    loss = float("nan")
    for epoch in range(start_epoch, epochs):
        skip = start_batch if epoch == start_epoch else 0
        sampler.start_epoch(epoch, skip * BATCH)
        for batch, (x, y) in enumerate(loader, start=skip):
            loss = train_step(ddp, opt, noise, x, y)
            step += 1
            if batch == 0 or step % LOG_EVERY == 0:
                say(rank, "epoch %d batch %2d step %3d loss %.6f" %
                    (epoch, batch, step, loss))
            if step_ms:
                time.sleep(step_ms / 1000)
            if ckpt_dir is None or not preemption.agree_to_stop():
                continue
            last = batch + 1 == steps_per_epoch
            save(ckpt_dir, step, epoch + last, 0 if last else batch + 1,
                 model, opt, noise)
            # Say it before requeueing: Slurm ends the job right after.
            say(rank, "preemption warning: checkpoint of step %d saved" % step)
            if stop_for_preemption(rank):
                return dist_train.PREEMPTED_EXIT_CODE
    return report(rank, world, model, loss)


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    step_ms = int(sys.argv[3]) if len(sys.argv) > 3 else int(
        os.environ.get("STEP_MS", "0"))
    ckpt_dir = os.environ.get("DT_CHECKPOINT_DIR")  # unset: no checkpoints
    # Debian 13+'s torch is built without libuv, which its env:// store asks
    # for by default (docs/user-guide.md); older torch ignores this.
    os.environ.setdefault("USE_LIBUV", "0")
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rc = train(dist.get_rank(), dist.get_world_size(), seed, epochs, step_ms,
               ckpt_dir)
    # Torch 1.13 hangs when the process group is destroyed while its thread
    # still frees a tensor of the last collective (it waits for the GIL that
    # the destroying thread holds): the barrier lets that finish first.
    dist.barrier()
    dist.destroy_process_group()
    return rc


if __name__ == "__main__":
    code = main()
    # Debian 13's torch 2.6 now and then aborts while the interpreter tears
    # down after a run that finished and destroyed its process group
    # ("terminate called without an active exception", exit 134: the job
    # would end FAILED). Nothing is left to do but flush stdio, so end here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
