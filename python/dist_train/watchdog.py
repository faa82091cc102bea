"""The hang watchdog from Python (docs/python.md, "Hang watchdog").

With DT_WATCHDOG=SECONDS (``--dist-train=watchdog=SECONDS``), a process of
the worker's own watches its progress; when there is none for SECONDS,
every rank's Python stacks (all threads, by faulthandler) are written to
the step's watchdog directory, rank 0 prints one summary naming the ranks
that did not progress, and the workers are killed. An unchanged PyTorch
DDP script gets it with one line after ``import torch``::

    import dist_train; dist_train.install_watchdog()

which counts every ``optimizer.step()`` as progress (torch 1.x, which has
no global step hook: every ``optimizer.zero_grad()``) and times the
forward pass of every DistributedDataParallel model made after it, for
the straggler report (a rank whose compute per step is >= 10 % over the
others' median is named on the job's log and in dt-status). Other loops
call ``dist_train.heartbeat()`` once per step and may report their own
compute time with ``dist_train.report_compute_time(seconds)``. dist_train.Communicator starts
the watchdog by itself and its collectives count.
"""
import faulthandler
import sys
import time

from . import _lib

_registered = False


def _register_dump():
    """faulthandler writes every thread's Python stack where the watchdog
    reads it, on its dump signal (once per process)."""
    global _registered
    lib = _lib.lib()
    if _registered or not lib.dt_watchdog_running():
        return
    faulthandler.register(lib.dt_watchdog_dump_signal(), file=lib.dt_watchdog_dump_fd(),
                          all_threads=True, chain=False)
    _registered = True


def _hook_torch_optimizers():
    """Every optimizer.step() of torch counts as progress (torch >= 2.0's
    global step hook; torch 1.x has none, so there every
    optimizer.zero_grad() counts), when torch is imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    import torch.optim.optimizer as optim
    if hasattr(optim, "register_optimizer_step_post_hook"):
        optim.register_optimizer_step_post_hook(lambda *args, **kwargs: heartbeat())
        return True
    zero_grad = optim.Optimizer.zero_grad

    def counted_zero_grad(self, *args, **kwargs):
        heartbeat()
        return zero_grad(self, *args, **kwargs)
    optim.Optimizer.zero_grad = counted_zero_grad
    return True


class _ForwardTimer:
    """Forward hooks that note a module's forward pass as compute time.
    Hooks, not a replaced ``module.forward``: a copy of the model
    (``copy.deepcopy``, e.g. an EMA or a teacher) runs its own forward and
    the model still pickles."""

    def __init__(self):
        self.start = 0

    def started(self, module, inputs):
        self.start = time.perf_counter_ns()

    def ended(self, module, inputs, output):
        _lib.lib().dt_note_compute_ns(max(0, time.perf_counter_ns() - self.start))


def _time_ddp_forward():
    """Every DistributedDataParallel model made from now on reports the
    time of its wrapped module's forward pass as compute time (the inner
    module's: DDP's own forward may wait for the others, to sync buffers).
    On CUDA this is the time to launch the pass, not to run it."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.distributed.is_available():
        return False
    from torch.nn.parallel import DistributedDataParallel as DDP
    init = DDP.__init__
    if getattr(init, "_dist_train_timed", False):
        return True
    def timed_init(self, module, *args, **kwargs):
        timer = _ForwardTimer()
        module.register_forward_pre_hook(timer.started)
        module.register_forward_hook(timer.ended)
        init(self, module, *args, **kwargs)
    timed_init._dist_train_timed = True
    DDP.__init__ = timed_init
    return True


_hooked = False


def install(count_optimizer_steps=True):
    """Starts the watchdog when DT_WATCHDOG is set and returns True, else
    returns False and changes nothing. A bad DT_WATCHDOG or watchdog
    directory raises DistTrainError naming it."""
    global _hooked
    lib = _lib.lib()
    _lib.check(lib.dt_watchdog_start())
    if not lib.dt_watchdog_running():
        return False
    _register_dump()
    if count_optimizer_steps and not _hooked:
        _hooked = _hook_torch_optimizers()
        _time_ddp_forward()
    return True


def heartbeat():
    """One unit of progress (e.g. one training step); a no-op without a
    watchdog."""
    _lib.lib().dt_heartbeat()


def report_compute_time(seconds):
    """Compute time this rank measured itself for the straggler report
    (e.g. one forward pass); once a program reports any, the report
    compares it instead of the time outside collectives."""
    _lib.lib().dt_note_compute_ns(max(0, int(seconds * 1e9)))


def running():
    """True while this process has a watchdog."""
    return bool(_lib.lib().dt_watchdog_running())
