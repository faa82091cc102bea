"""dist-train from Python: the environment contract, stopping together on
preemption, atomic checkpoints and the native collectives.

Pure Python over the C API of libdist-train.so.0 (ctypes). Importing this
package imports neither torch nor numpy and does not load the library, so
the first line of a training script can be::

    import dist_train.preemption; dist_train.preemption.install_stop_handler()

See docs/python.md.
"""
from ._errors import (DistTrainError, OK, INVALID_ARGUMENT, NOT_FOUND, IO_ERROR, UNAVAILABLE,
                      TIMEOUT, PERMISSION_DENIED, INTERNAL)
from ._comm import Communicator
from . import preemption, checkpoint, watchdog  # noqa: F401  (pure Python, cheap)
from .watchdog import install as install_watchdog, heartbeat, report_compute_time

__version__ = "0.1.0"

PREEMPTED_EXIT_CODE = 75  # DT_PREEMPTED_EXIT_CODE (EX_TEMPFAIL)

__all__ = ["DistTrainError", "PREEMPTED_EXIT_CODE", "Env", "env", "version", "Communicator",
           "preemption", "checkpoint", "watchdog", "install_watchdog", "heartbeat",
           "report_compute_time", "OK", "INVALID_ARGUMENT", "NOT_FOUND", "IO_ERROR",
           "UNAVAILABLE", "TIMEOUT", "PERMISSION_DENIED", "INTERNAL"]


def __getattr__(name):
    # Env is made on first use: dataclasses (and inspect, re, ...) would
    # cost an import of this package tens of milliseconds.
    if name == "Env":
        from ._env import Env
        return Env
    raise AttributeError("module 'dist_train' has no attribute '%s'" % name)


def _or_none(value):
    return None if value < 0 else value


def env():
    """Reads the environment strictly: a set but bad variable raises
    DistTrainError naming it (INVALID_ARGUMENT), never a default."""
    import ctypes
    from . import _lib
    from ._env import Env
    raw = _lib.Env()
    _lib.check(_lib.lib().dt_env_read(ctypes.byref(raw)))
    return Env(rank=_or_none(raw.rank), world_size=_or_none(raw.world_size),
               local_rank=_or_none(raw.local_rank),
               local_world_size=_or_none(raw.local_world_size),
               node_rank=_or_none(raw.node_rank),
               master_addr=raw.master_addr.decode("utf-8", "replace") or None,
               master_port=_or_none(raw.master_port), job_id=_or_none(raw.job_id),
               restart_count=_or_none(raw.restart_count), deadline=_or_none(raw.deadline))


def version():
    """The package version of the loaded library, e.g. "0.1.0"."""
    from . import _lib
    return _lib.lib().dt_version().decode()
