"""dist_train.Communicator: the native collectives (shared memory on one
machine, TCP ring across machines) on host buffers from Python."""
import ctypes
import sys

# dt_dtype
FLOAT32, FLOAT64, INT32, INT64, BFLOAT16, FLOAT16 = 0, 1, 2, 3, 4, 5
_DTYPE_NAMES = {FLOAT32: "float32", FLOAT64: "float64", INT32: "int32", INT64: "int64",
                BFLOAT16: "bfloat16", FLOAT16: "float16"}
_NUMPY_DTYPES = {name: code for code, name in _DTYPE_NAMES.items()}
# memoryview format character -> {itemsize: dt_dtype}
_FORMATS = {"f": {4: FLOAT32}, "d": {8: FLOAT64}, "e": {2: FLOAT16},
            "i": {4: INT32, 8: INT64}, "l": {4: INT32, 8: INT64}, "q": {4: INT32, 8: INT64}}
_FORMAT_LIST = "f (float32), d (float64), i (int32), l or q (int64), e (float16)"
_OPS = {"sum": 0, "min": 1, "max": 2, "avg": 3}


class _Buffer:
    """A validated buffer: its address, element count and dt_dtype; holds
    what keeps the memory alive and the exporter locked during the call."""
    __slots__ = ("address", "count", "dtype", "keep")

    def __init__(self, address, count, dtype, keep):
        self.address, self.count, self.dtype, self.keep = address, count, dtype, keep


def _numpy_buffer(array, name, writable):
    if not array.flags.c_contiguous:
        raise ValueError("%s is not C-contiguous (use numpy.ascontiguousarray)" % name)
    if writable and not array.flags.writeable:
        raise ValueError("%s is read-only" % name)
    dtype = _NUMPY_DTYPES.get(array.dtype.name)
    if dtype is None or not array.dtype.isnative:
        raise TypeError("%s has dtype %s; supported: float32, float64, int32, int64, float16"
                        % (name, array.dtype.str if dtype is not None else array.dtype.name))
    return _Buffer(array.ctypes.data, array.size, dtype, array)


def _format_dtype(view, name):
    fmt = view.format
    if len(fmt) == 2 and fmt[0] in "@=" + ("<" if sys.byteorder == "little" else ">!"):
        fmt = fmt[1:]
    dtype = _FORMATS.get(fmt, {}).get(view.itemsize)
    if dtype is None:
        raise TypeError("%s has format '%s'; supported: %s" % (name, view.format, _FORMAT_LIST))
    return dtype


def _view_buffer(obj, name, writable):
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError("%s is a %s: not a numpy array or buffer-protocol object "
                        "(array.array, memoryview)" % (name, type(obj).__name__)) from None
    if writable and view.readonly:
        raise ValueError("%s is read-only" % name)
    if not view.c_contiguous:
        raise ValueError("%s is not C-contiguous" % name)
    dtype = _format_dtype(view, name)
    raw = view.cast("B")
    if view.readonly:  # only ever read: a private copy
        chars = (ctypes.c_char * raw.nbytes).from_buffer_copy(raw)
    else:
        chars = (ctypes.c_char * raw.nbytes).from_buffer(raw)
    return _Buffer(ctypes.addressof(chars), view.nbytes // view.itemsize, dtype,
                   (obj, view, raw, chars))


def as_buffer(obj, name, writable):
    """Validates a collective's argument `name`: ValueError for read-only
    (when written), non-contiguous; TypeError for an unsupported type."""
    numpy = sys.modules.get("numpy")  # never imported here: only if the caller did
    if numpy is not None and isinstance(obj, numpy.ndarray):
        return _numpy_buffer(obj, name, writable)
    return _view_buffer(obj, name, writable)


def op_code(op):
    if not isinstance(op, str):
        raise TypeError("op is a %s; expected one of %s" % (type(op).__name__, ", ".join(_OPS)))
    code = _OPS.get(op.lower())
    if code is None:
        raise ValueError("op='%s' is not one of %s" % (op, ", ".join(_OPS)))
    return code


def _same_dtype(send, recv):
    if send.dtype != recv.dtype:
        raise TypeError("recv is %s but send is %s" % (_DTYPE_NAMES[recv.dtype],
                                                       _DTYPE_NAMES[send.dtype]))


class Communicator:
    """All ranks of the job, joined through the environment (RANK,
    WORLD_SIZE, MASTER_ADDR, MASTER_PORT, DT_JOB_TOKEN, ...: docs/runtime.md).
    Creating one is collective (every rank must). Collectives block and
    release the GIL while they run. Not for concurrent use from several
    threads. A context manager; close() ends this rank's membership."""

    def __init__(self):
        from . import _lib
        self._c = _lib.lib()
        self._check = _lib.check
        handle = ctypes.c_void_p()
        self._handle = None
        self._check(self._c.dt_comm_create(ctypes.byref(handle)))
        self._handle = handle
        from .watchdog import _register_dump
        _register_dump()  # dt_comm_create started it when DT_WATCHDOG is set
        self.rank = self._c.dt_comm_rank(handle)
        self.size = self._c.dt_comm_size(handle)

    def _h(self):
        if self._handle is None:
            raise ValueError("the Communicator is closed")
        return self._handle

    def describe(self):
        """How collectives travel, e.g. "shared memory (4 ranks)"."""
        buf = ctypes.create_string_buffer(128)
        length = self._c.dt_comm_describe(self._h(), buf, len(buf))
        if length >= len(buf):
            buf = ctypes.create_string_buffer(length + 1)
            self._c.dt_comm_describe(self._h(), buf, len(buf))
        return buf.value.decode("utf-8", "replace")

    def all_reduce(self, buf, op="sum"):
        """Reduces `buf` over all ranks, in place. op: sum, min, max, avg."""
        b = as_buffer(buf, "buf", writable=True)
        code = op_code(op)
        self._check(self._c.dt_comm_all_reduce(self._h(), b.address, b.address, b.count,
                                               b.dtype, code))

    def broadcast(self, buf, root=0):
        """Copies rank `root`'s `buf` into every rank's `buf`."""
        b = as_buffer(buf, "buf", writable=True)
        if not isinstance(root, int) or not 0 <= root < self.size:
            raise ValueError("root=%r is not a rank of this communicator (size %d)"
                             % (root, self.size))
        self._check(self._c.dt_comm_broadcast(self._h(), b.address, b.count, b.dtype, root))

    def all_gather(self, send, recv):
        """recv (size * len(send) elements) gets rank r's send at r * len(send)."""
        s = as_buffer(send, "send", writable=False)
        r = as_buffer(recv, "recv", writable=True)
        _same_dtype(s, r)
        if r.count != self.size * s.count:
            raise ValueError("recv holds %d elements; all_gather of %d from %d ranks needs %d"
                             % (r.count, s.count, self.size, self.size * s.count))
        self._check(self._c.dt_comm_all_gather(self._h(), s.address, r.address, s.count,
                                               s.dtype))

    def reduce_scatter(self, send, recv, op="sum"):
        """Reduces send (size * len(recv) elements) over all ranks; recv gets
        this rank's slice."""
        s = as_buffer(send, "send", writable=False)
        r = as_buffer(recv, "recv", writable=True)
        _same_dtype(s, r)
        code = op_code(op)
        if s.count != self.size * r.count:
            raise ValueError("send holds %d elements; reduce_scatter into %d per rank over %d "
                             "ranks needs %d" % (s.count, r.count, self.size,
                                                 self.size * r.count))
        self._check(self._c.dt_comm_reduce_scatter(self._h(), s.address, r.address, r.count,
                                                   s.dtype, code))

    def barrier(self):
        self._check(self._c.dt_comm_barrier(self._h()))

    def close(self):
        """Ends this rank's membership (idempotent)."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle is not None:
            self._c.dt_comm_destroy(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def __repr__(self):
        state = "closed" if self._handle is None else "rank %d of %d" % (self.rank, self.size)
        return "<dist_train.Communicator %s>" % state
