"""Stopping together when the job is about to be preempted or to hit its
time limit, and requeueing it (docs/python.md, docs/preemption.md).

Call install_stop_handler() as the first line of the script, before
``import torch``: its handler is the library's C handler, which only sets a
flag and is installed with SA_RESTART. A warning signal that arrives while
Python imports torch (or sits in any system call) is then neither a
Python exception nor an interrupted system call, and the training loop sees
it at the next stop_requested()/agree_to_stop()."""
import ctypes
import sys
import threading

from ._errors import NOT_FOUND, PERMISSION_DENIED

_default_comm = None
_default_comm_lock = threading.Lock()


def _lib():
    from . import _lib as lib_module
    return lib_module


# The signals a stop handler may take (as DT_PREEMPT_SIGNAL's in the library).
_STOP_SIGNALS = ("USR1", "USR2", "TERM", "INT", "HUP", "URG")


def _signal_number(sig):
    if sig is None:
        return 0  # DT_PREEMPT_SIGNAL, else SIGUSR1 (read by the library)
    import signal as _signal  # not before: it imports enum
    if isinstance(sig, str):
        name = sig.upper()
        number = getattr(_signal, name if name.startswith("SIG") else "SIG" + name, None)
        if not isinstance(number, int) or name.startswith("SIG_"):
            raise ValueError("signal='%s' is not a signal name (e.g. USR1 or SIGUSR1)" % sig)
        sig = number
    if not isinstance(sig, int):  # signal.Signals is an int too
        raise TypeError("signal is a %s; expected an int, a name such as 'USR1', or None"
                        % type(sig).__name__)
    try:
        name = _signal.Signals(sig).name
    except ValueError:
        name = str(int(sig))
    if name[3:] not in _STOP_SIGNALS:
        raise ValueError("signal=%s is not one of %s or %s"
                         % (name, ", ".join(_STOP_SIGNALS[:-1]), _STOP_SIGNALS[-1]))
    return int(sig)


def install_stop_handler(signal=None):
    """Installs the library's flag-setting handler for `signal` (an int or a
    name, "USR1" or "SIGUSR1"; None: DT_PREEMPT_SIGNAL, else SIGUSR1): one of
    USR1, USR2, TERM, INT, HUP and URG, anything else is a ValueError (a bad
    DT_PREEMPT_SIGNAL a DistTrainError). Python's signal.getsignal() does not
    see this handler."""
    number = _signal_number(signal)
    lib = _lib()
    lib.check(lib.lib().dt_install_stop_handler(number))


def stop_requested():
    """True once the stop signal came (or request_stop() was called)."""
    return bool(_lib().lib().dt_stop_requested())


def request_stop():
    _lib().lib().dt_request_stop()


def clear_stop_request():
    _lib().lib().dt_clear_stop_request()


def torch_distributed():
    """torch.distributed when the program imported it and initialized a
    process group, else None (never imports torch)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist


def default_communicator():
    """The Communicator made from the environment, created once (collective:
    every rank's first call must come at the same point) and cached."""
    global _default_comm
    with _default_comm_lock:
        if _default_comm is None:
            from ._comm import Communicator
            _default_comm = Communicator()
        return _default_comm


def all_max(value, comm=None):
    """The maximum of the int `value` over all ranks: through `comm`, else
    torch.distributed when initialized, else the default Communicator."""
    if comm is None:
        dist = torch_distributed()
        if dist is not None:
            return _torch_all_max(dist, value)
        comm = default_communicator()
    cell = (ctypes.c_int64 * 1)(value)
    comm.all_reduce(memoryview(cell).cast("B").cast("q"), op="max")
    return int(cell[0])


def _torch_all_max(dist, value):
    import torch
    device = "cpu"
    if dist.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    tensor = torch.tensor([value], dtype=torch.int64, device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return int(tensor.item())


def agree_to_stop(comm=None):
    """Collective: True on every rank when any rank has a stop request, so
    all stop after the same step. comm: a dist_train.Communicator; None:
    torch.distributed when it is initialized (an all_reduce MAX of an int
    tensor), else the Communicator made from the environment (cached)."""
    if comm is None and torch_distributed() is None:
        comm = default_communicator()
    if comm is not None:
        stop = ctypes.c_int(0)
        lib = _lib()
        lib.check(lib.lib().dt_agree_to_stop(comm._h(), ctypes.byref(stop)))
        return bool(stop.value)
    return all_max(int(stop_requested())) != 0


def seconds_left():
    """Seconds until the job's time limit (live from slurmctld inside a
    Slurm job, else DT_JOB_DEADLINE); None outside a job or without a limit."""
    seconds = ctypes.c_int64(0)
    lib = _lib()
    code = lib.lib().dt_seconds_left(ctypes.byref(seconds))
    if code == NOT_FOUND:
        return None
    lib.check(code)
    return int(seconds.value)


def requeue(max_requeues=None):
    """Requeues this job (this array task) through libslurm. True: requeued;
    False: SLURM_RESTART_COUNT reached the maximum (max_requeues; None:
    DT_MAX_REQUEUES, unlimited when unset). Other failures (outside a job:
    NOT_FOUND naming SLURM_JOB_ID) raise DistTrainError."""
    if max_requeues is None:
        limit = -1
    elif isinstance(max_requeues, int) and max_requeues >= 0:
        limit = max_requeues
    else:
        raise ValueError("max_requeues=%r is not a count (an int >= 0) or None" % (max_requeues,))
    lib = _lib()
    code = lib.lib().dt_requeue(limit)
    if code == PERMISSION_DENIED:
        return False
    lib.check(code)
    return True
