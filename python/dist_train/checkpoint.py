"""Atomic multi-rank checkpoints: every rank writes its own file of a step;
LATEST names the step only once every rank's file is durable, so a resume
never sees a step where some rank died while saving (docs/python.md).

    dir/step-N/rank-R.bin   this rank's state (torch.save, else pickle)
    dir/LATEST              the newest complete step (written by rank 0)
"""
import ctypes
import os

from ._errors import DistTrainError, NOT_FOUND, UNAVAILABLE
from . import preemption

_ZIP_MAGIC = b"PK\x03\x04"  # torch.save's format; pickle starts with 0x80


def _lib():
    from . import _lib as lib_module
    return lib_module


def _resolve_dir(dir):
    if dir is None:
        dir = os.environ.get("DT_CHECKPOINT_DIR") or None
        if dir is None:
            raise DistTrainError(NOT_FOUND, "checkpoint: no dir given and DT_CHECKPOINT_DIR "
                                 "is not set")
    return os.fsencode(os.fspath(dir))


def _rank(comm):
    if comm is not None:
        return comm.rank
    dist = preemption.torch_distributed()
    if dist is not None:
        return dist.get_rank()
    return preemption.default_communicator().rank


def _load_rank():
    """The rank for load(): torch.distributed, the default communicator if
    one exists, else the environment (no rendezvous just to read a file)."""
    dist = preemption.torch_distributed()
    if dist is not None:
        return dist.get_rank()
    if preemption._default_comm is not None:
        return preemption._default_comm.rank
    from . import env
    rank = env().rank
    return 0 if rank is None else rank


def _serialize(state, path):
    try:
        import torch
    except ImportError:
        torch = None
        import pickle
    with open(path, "wb") as f:
        if torch is not None:
            torch.save(state, f)
        else:
            pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)


def _write_own_file(dir, step, rank, state):
    """begin, write, finish: this rank's file is durable under its name."""
    lib = _lib()
    c = lib.lib()
    ck = ctypes.c_void_p()
    lib.check(c.dt_checkpoint_begin(dir, step, rank, ctypes.byref(ck)))
    try:
        _serialize(state, os.fsdecode(c.dt_checkpoint_path(ck)))
        lib.check(c.dt_checkpoint_finish(ck))
    finally:
        c.dt_checkpoint_free(ck)


def save(step, state, dir=None, comm=None):
    """Collective: every rank saves its `state` of `step` (an int >= 0).
    dir: None means DT_CHECKPOINT_DIR. comm: as agree_to_stop's
    (torch.distributed when initialized, else the native communicator).
    Returns once LATEST names `step`. Raises on every rank when any rank
    failed (its own error there; DistTrainError UNAVAILABLE elsewhere), and
    LATEST then keeps the previous step."""
    if not isinstance(step, int) or step < 0:
        raise ValueError("step=%r is not an int >= 0" % (step,))
    dir = _resolve_dir(dir)
    rank = _rank(comm)
    failure = None
    try:
        _write_own_file(dir, step, rank, state)
    except Exception as e:  # reported to every rank below, then re-raised here
        failure = e
    _agree_or_raise(failure, rank, step, dir, comm, "failed to write its file")
    failure = None
    if rank == 0:
        lib = _lib()
        try:
            lib.check(lib.lib().dt_checkpoint_mark_complete(dir, step))
        except DistTrainError as e:
            failure = e
    _agree_or_raise(failure, rank, step, dir, comm, "failed to mark it complete (LATEST)")


def _agree_or_raise(failure, rank, step, dir, comm, what):
    failed = preemption.all_max(rank + 1 if failure is not None else 0, comm)
    if failure is not None:
        raise failure
    if failed:
        raise DistTrainError(UNAVAILABLE, "checkpoint step %d in %s: rank %d %s; LATEST is "
                             "unchanged" % (step, os.fsdecode(dir), failed - 1, what))


def _open_latest(dir, rank):
    """(step, fd) of the newest complete step, or None."""
    lib = _lib()
    step = ctypes.c_uint64(0)
    fd = ctypes.c_int(-1)
    code = lib.lib().dt_checkpoint_open_latest(dir, rank, ctypes.byref(step), ctypes.byref(fd))
    if code == NOT_FOUND:
        return None
    lib.check(code)
    return int(step.value), fd.value


def latest_step(dir=None):
    """The newest complete step in dir (None: DT_CHECKPOINT_DIR), or None.
    Not collective; this rank's file of it is opened (and closed) to check."""
    found = _open_latest(_resolve_dir(dir), _load_rank())  # a node-local dir has this rank's
    if found is None:
        return None
    os.close(found[1])
    return found[0]


def load(dir=None, map_location="cpu"):
    """(step, state) of the newest complete step, this rank's file; None when
    no step is complete. Files written by torch.save are read with
    torch.load(f, map_location=...), others with pickle. Only load files you
    trust: both formats run code from the file."""
    found = _open_latest(_resolve_dir(dir), _load_rank())
    if found is None:
        return None
    step, fd = found
    with os.fdopen(fd, "rb") as f:
        if f.peek(4)[:4] == _ZIP_MAGIC:
            import torch
            return step, torch.load(f, map_location=map_location)
        import pickle
        return step, pickle.load(f)
