"""Finding and loading libdist-train.so.0, and the ctypes prototypes of its
C API (include/dist_train/dist_train.h).

The library is loaded on first use, never at import, so that
``dist_train.preemption.install_stop_handler()`` stays the first cheap call
of a script. Lookup order (docs/python.md):

1. ``DT_LIBRARY``: a path to libdist-train.so.0 (an error if it does not load);
2. the checkout's build tree: ``python/dist_train/../../build/``;
3. the ``LIBDIR`` that ``make install`` recorded in ``_install.py``;
4. the plain soname through the dynamic loader (ld.so.conf, LD_LIBRARY_PATH).
"""
import ctypes
import os
import threading

from ._errors import DistTrainError, NOT_FOUND, INTERNAL

SONAME = "libdist-train.so.0"
API_VERSION = 3

# How many times a library was loaded (tests check that import loads none
# and that it is loaded once), and from where.
LOAD_COUNT = 0
loaded_path = None

_lib = None
_lock = threading.Lock()

_c_int = ctypes.c_int
_c_size = ctypes.c_size_t
_c_ptr = ctypes.c_void_p
_c_str = ctypes.c_char_p


class Env(ctypes.Structure):
    """dt_env."""
    _fields_ = [
        ("rank", _c_int),
        ("world_size", _c_int),
        ("local_rank", _c_int),
        ("local_world_size", _c_int),
        ("node_rank", _c_int),
        ("master_port", _c_int),
        ("master_addr", ctypes.c_char * 256),
        ("job_id", ctypes.c_int64),
        ("restart_count", ctypes.c_int64),
        ("deadline", ctypes.c_int64),
    ]


# name: (restype, argtypes)
_PROTOTYPES = {
    "dt_last_error": (_c_str, []),
    "dt_code_name": (_c_str, [_c_int]),
    "dt_api_version": (_c_int, []),
    "dt_version": (_c_str, []),
    "dt_env_read": (_c_int, [ctypes.POINTER(Env)]),
    "dt_dtype_size": (_c_size, [_c_int]),
    "dt_comm_create": (_c_int, [ctypes.POINTER(_c_ptr)]),
    "dt_comm_destroy": (None, [_c_ptr]),
    "dt_comm_rank": (_c_int, [_c_ptr]),
    "dt_comm_size": (_c_int, [_c_ptr]),
    "dt_comm_describe": (_c_size, [_c_ptr, ctypes.c_char_p, _c_size]),
    "dt_comm_all_reduce": (_c_int, [_c_ptr, _c_ptr, _c_ptr, _c_size, _c_int, _c_int]),
    "dt_comm_broadcast": (_c_int, [_c_ptr, _c_ptr, _c_size, _c_int, _c_int]),
    "dt_comm_all_gather": (_c_int, [_c_ptr, _c_ptr, _c_ptr, _c_size, _c_int]),
    "dt_comm_reduce_scatter": (_c_int, [_c_ptr, _c_ptr, _c_ptr, _c_size, _c_int, _c_int]),
    "dt_comm_barrier": (_c_int, [_c_ptr]),
    "dt_install_stop_handler": (_c_int, [_c_int]),
    "dt_stop_requested": (_c_int, []),
    "dt_request_stop": (None, []),
    "dt_clear_stop_request": (None, []),
    "dt_agree_to_stop": (_c_int, [_c_ptr, ctypes.POINTER(_c_int)]),
    "dt_seconds_left": (_c_int, [ctypes.POINTER(ctypes.c_int64)]),
    "dt_requeue": (_c_int, [_c_int]),
    "dt_watchdog_start": (_c_int, []),
    "dt_watchdog_running": (_c_int, []),
    "dt_heartbeat": (None, []),
    "dt_watchdog_dump_signal": (_c_int, []),
    "dt_watchdog_dump_fd": (_c_int, []),
    "dt_note_compute_ns": (None, [ctypes.c_uint64]),
    "dt_checkpoint_begin": (_c_int, [_c_str, ctypes.c_uint64, _c_int, ctypes.POINTER(_c_ptr)]),
    "dt_checkpoint_path": (_c_str, [_c_ptr]),
    "dt_checkpoint_finish": (_c_int, [_c_ptr]),
    "dt_checkpoint_commit": (_c_int, [_c_ptr, _c_ptr]),
    "dt_checkpoint_free": (None, [_c_ptr]),
    "dt_checkpoint_mark_complete": (_c_int, [_c_str, ctypes.c_uint64]),
    "dt_checkpoint_open_latest": (
        _c_int, [_c_str, _c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(_c_int)]),
}


def _build_tree_candidate():
    """The checkout's build/ when this package is python/dist_train/ of a
    checkout (recognised by its C API header), else None."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.isfile(os.path.join(root, "include", "dist_train", "dist_train.h")):
        return None
    path = os.path.join(root, "build", SONAME)
    return path if os.path.exists(path) else None


def _install_candidate():
    try:
        from . import _install  # written by `make install` into the installed copy only
    except ImportError:
        return None
    path = os.path.join(_install.LIBDIR, SONAME)
    return path if os.path.exists(path) else None


def candidates():
    """Where the library is looked for, in order: [(where, path)]."""
    explicit = os.environ.get("DT_LIBRARY")
    if explicit:
        return [("DT_LIBRARY", explicit)]
    found = []
    for where, path in (("build tree", _build_tree_candidate()),
                        ("make install", _install_candidate())):
        if path:
            found.append((where, path))
    found.append(("dynamic loader", SONAME))
    return found


def _open():
    tried = []
    for where, path in candidates():
        try:
            # RTLD_GLOBAL: libslurm's plugins (auth_munge.so, ...) that dt_requeue
            # makes it dlopen take slurm_conf etc. from the global scope.
            return path, ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            if where == "DT_LIBRARY":
                raise DistTrainError(NOT_FOUND, "DT_LIBRARY='%s' cannot be loaded: %s" % (path, e))
            tried.append("%s (%s): %s" % (path, where, e))
    raise DistTrainError(NOT_FOUND, "%s not found: tried %s; set DT_LIBRARY to its path"
                         % (SONAME, "; ".join(tried)))


def _declare(lib, path):
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise DistTrainError(
                INTERNAL, "%s has no %s: it predates the C API this package needs (%d)"
                % (path, name, API_VERSION))
        fn.restype = restype
        fn.argtypes = argtypes
    if lib.dt_api_version() < API_VERSION:
        raise DistTrainError(INTERNAL, "%s provides C API %d; this package needs %d"
                             % (path, lib.dt_api_version(), API_VERSION))


def lib():
    """The loaded library (loaded here on first use)."""
    global _lib, LOAD_COUNT, loaded_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            path, handle = _open()
            _declare(handle, path)
            LOAD_COUNT += 1
            loaded_path = path
            _lib = handle
    return _lib


def is_loaded():
    return _lib is not None


def last_error():
    return lib().dt_last_error().decode("utf-8", "replace")


def error(code):
    """A DistTrainError for `code` with this thread's last library message."""
    return DistTrainError(code, last_error())


def check(code):
    """Raises the library's error for a failing dt_code."""
    if code != 0:
        raise error(code)
