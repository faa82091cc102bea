"""dist_train.Communicator: the native collectives on numpy arrays and
buffer-protocol objects, and the errors for buffers it cannot use."""
import array
import unittest

import _ranks

import dist_train

try:
    import numpy
except ImportError:
    numpy = None

_COLLECTIVES = """
    import array, sys
    import dist_train
    try:
        import numpy as np
    except ImportError:
        np = None  # the buffer-protocol part below runs all the same

    def same(got, want):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)

    def numpy_arrays(c, r, n):
        base = np.arange(6)
        for dt in ("float32", "float64", "int32", "int64", "float16"):
            for op, want in (("sum", n * base + n * (n - 1) // 2), ("min", base),
                             ("max", base + n - 1)):
                x = (base + r).astype(dt)
                c.all_reduce(x, op=op)
                same(x, want.astype(dt))
            if dt.startswith("float"):
                x = (base + 2 * r).astype(dt)
                c.all_reduce(x, op="avg")
                same(x, (base + n - 1).astype(dt))
            x = np.full(5, r, dtype=dt)
            c.broadcast(x, root=1)
            same(x, np.full(5, 1, dtype=dt))
            recv = np.zeros(2 * n, dtype=dt)
            c.all_gather(np.full(2, r, dtype=dt), recv)
            same(recv, np.repeat(np.arange(n), 2).astype(dt))
            recv = np.zeros(2, dtype=dt)
            send = np.arange(2 * n, dtype=dt) + r
            send.flags.writeable = False  # only read
            c.reduce_scatter(send, recv)
            same(recv, (n * np.arange(2 * n) + n * (n - 1) // 2)[2 * r:2 * r + 2].astype(dt))
        grid = np.ones((64, 1024), dtype=np.float32) * (r + 1)  # 2-D, 256 KiB
        c.all_reduce(grid)
        same(grid, np.full((64, 1024), n * (n + 1) // 2, dtype=np.float32))

    def buffer_protocol(c, r, n):
        for code in "fdilq":
            a = array.array(code, [r, 2 * r])
            c.all_reduce(a)
            assert list(a) == [n * (n - 1) // 2, n * (n - 1)], (code, a)
        a = array.array("d", [r] * 3)
        c.broadcast(a, root=2)
        assert list(a) == [2.0] * 3, a
        raw = bytearray(16)
        view = memoryview(raw).cast("q")
        view[0], view[1] = r, -r
        c.all_reduce(view, op="max")
        assert list(view) == [n - 1, 0], list(view)
        gathered = memoryview(bytearray(4 * n)).cast("i")
        c.all_gather(memoryview(bytes(array.array("i", [10 + r]))).cast("i"), gathered)
        assert list(gathered) == [10 + k for k in range(n)], list(gathered)
        part = array.array("f", [0.0])
        c.reduce_scatter(array.array("f", [float(k) for k in range(n)]), part, op="min")
        assert list(part) == [float(r)], part

    with dist_train.Communicator() as c:
        if np is not None:
            numpy_arrays(c, c.rank, c.size)
        buffer_protocol(c, c.rank, c.size)
        c.barrier()
        print("ok", c.size, bool(c.describe()))
"""


def _one_rank_communicator(test):
    with _ranks.patched_environ(RANK=0, WORLD_SIZE=1, MASTER_ADDR="127.0.0.1",
                                MASTER_PORT=_ranks.free_port(), DT_TIMEOUT=30):
        comm = dist_train.Communicator()
    test.addCleanup(comm.close)
    return comm


class CollectivesTest(unittest.TestCase):
    def test_three_ranks_every_collective_dtype_and_buffer_kind(self):
        results = _ranks.run_ranks(_COLLECTIVES, 3)
        for r in results:
            self.assertEqual((r.returncode, r.stdout), (0, "ok 3 True\n"),
                             _ranks.describe(results))

    def test_one_rank(self):
        comm = _one_rank_communicator(self)
        self.assertEqual((comm.rank, comm.size), (0, 1))
        a = array.array("d", [1.5, -2.0])
        comm.all_reduce(a, op="avg")
        self.assertEqual(list(a), [1.5, -2.0])
        recv = array.array("i", [0, 0])
        comm.all_gather(array.array("i", [4, 5]), recv)
        self.assertEqual(list(recv), [4, 5])
        comm.barrier()
        self.assertEqual(repr(comm), "<dist_train.Communicator rank 0 of 1>")


class BufferErrorTest(unittest.TestCase):
    """Each error names the argument; nothing reaches the library."""

    def setUp(self):
        self.comm = _one_rank_communicator(self)

    def assertRaisesExactly(self, error, message, call, *args, **kwargs):
        with self.assertRaises(error) as cm:
            call(*args, **kwargs)
        self.assertEqual(str(cm.exception), message)

    def test_read_only(self):
        self.assertRaisesExactly(ValueError, "buf is read-only", self.comm.all_reduce,
                                 memoryview(bytes(8)).cast("f"))
        self.assertRaisesExactly(ValueError, "recv is read-only", self.comm.all_gather,
                                 array.array("f", [1]), memoryview(bytes(4)).cast("f"))

    def test_not_contiguous(self):
        self.assertRaisesExactly(ValueError, "buf is not C-contiguous", self.comm.all_reduce,
                                 memoryview(array.array("f", [1, 2, 3, 4]))[::2])

    def test_unsupported_types(self):
        self.assertRaisesExactly(TypeError, "buf has format 'B'; supported: f (float32), "
                                 "d (float64), i (int32), l or q (int64), e (float16)",
                                 self.comm.all_reduce, bytearray(4))
        self.assertRaisesExactly(TypeError, "buf is a list: not a numpy array or buffer-protocol"
                                 " object (array.array, memoryview)", self.comm.all_reduce,
                                 [1.0])
        self.assertRaisesExactly(TypeError, "recv is int32 but send is float32",
                                 self.comm.all_gather, array.array("f", [1]),
                                 array.array("i", [0]))

    def test_wrong_lengths(self):
        self.assertRaisesExactly(ValueError, "recv holds 3 elements; all_gather of 2 from 1 "
                                 "ranks needs 2", self.comm.all_gather, array.array("f", [1, 2]),
                                 array.array("f", [0, 0, 0]))
        self.assertRaisesExactly(ValueError, "send holds 3 elements; reduce_scatter into 2 per "
                                 "rank over 1 ranks needs 2", self.comm.reduce_scatter,
                                 array.array("f", [1, 2, 3]), array.array("f", [0, 0]))

    def test_unknown_op_and_root(self):
        buf = array.array("f", [1])
        self.assertRaisesExactly(ValueError, "op='prod' is not one of sum, min, max, avg",
                                 self.comm.all_reduce, buf, op="prod")
        self.assertRaisesExactly(TypeError, "op is a int; expected one of sum, min, max, avg",
                                 self.comm.all_reduce, buf, op=0)
        self.assertRaisesExactly(ValueError, "root=1 is not a rank of this communicator (size 1)",
                                 self.comm.broadcast, buf, root=1)

    @unittest.skipIf(numpy is None, "numpy is not importable")
    def test_numpy_arrays(self):
        x = numpy.zeros(4, dtype=numpy.float32)
        x.flags.writeable = False
        self.assertRaisesExactly(ValueError, "buf is read-only", self.comm.all_reduce, x)
        self.assertRaisesExactly(ValueError, "buf is not C-contiguous (use "
                                 "numpy.ascontiguousarray)", self.comm.all_reduce,
                                 numpy.zeros(8, dtype=numpy.float32)[::2])
        self.assertRaisesExactly(TypeError, "buf has dtype int8; supported: float32, float64, "
                                 "int32, int64, float16", self.comm.all_reduce,
                                 numpy.zeros(4, dtype=numpy.int8))
        self.assertRaisesExactly(TypeError, "buf has dtype >f4; supported: float32, float64, "
                                 "int32, int64, float16", self.comm.all_reduce,
                                 numpy.zeros(4, dtype=">f4"))

    def test_closed(self):
        self.comm.close()
        self.comm.close()
        self.assertRaisesExactly(ValueError, "the Communicator is closed", self.comm.barrier)
        self.assertEqual(repr(self.comm), "<dist_train.Communicator closed>")


if __name__ == "__main__":
    unittest.main()
