#!/usr/bin/python3
"""All-reduce busbw from Python: dist_train.Communicator against PyTorch + Gloo,
measured in the same run by the same processes on one machine.

    bench/python_vs_gloo.py [--nproc 4] [--sizes 1M,16M,64M] [--iters 10]
                            [--warmup 2] [--stat median|mean] [--pin]
                            [--hog] [--hog-nice N] [--require-ratio R]

Starts --nproc workers on 127.0.0.1 (RANK, WORLD_SIZE, MASTER_ADDR, a free
MASTER_PORT and a fresh DT_JOB_TOKEN each, as `dt-run --standalone`); every
worker makes a dist_train.Communicator and a Gloo process group. Per size it
checks both results once (float32 sum of rank-dependent values), then runs
warm-up and timed all-reduces, ours and Gloo's alternating, each after a
barrier. A size's time is the median (--stat mean: the mean, which counts
the rare slow calls a median hides) over the timed iterations of the
slowest rank's time; algbw = bytes / time, busbw = algbw * 2(n-1)/n (as
dt-bench and bench/gloo_busbw.py). The last line says whether the ratio at
the largest size reaches R (default 2.0). --pin binds worker r to CPU
r mod nproc(1) (both libraries run in that process, so both are pinned);
--hog runs a busy loop per CPU beside the workers for the whole run (how
each waits when the CPUs are not its alone), at nice N with --hog-nice
(19: a background job such as a niced compile).

Exit status: 0; 1 when a result is wrong or a worker failed; 2 for bad
arguments; 3 when --require-ratio is given and the ratio is below it.
Finds the package in python/ of this checkout and the library as the package
does (DT_LIBRARY, else build/). Needs torch and numpy (Debian: /usr/bin/python3).
"""
import argparse
import importlib.util
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIR = os.path.join(REPO, "python")
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
CLAIM_SIZE = 64 << 20
EXIT_WRONG, EXIT_USAGE, EXIT_BELOW = 1, 2, 3


def parse_size(text):
    """'64M' -> 67108864 (K, M, G are powers of 1024; a plain number is bytes)."""
    unit = text[-1:].upper() if text[-1:].isalpha() else ""
    digits = text[:-1] if unit else text
    if unit not in UNITS or not digits.isdigit():
        raise argparse.ArgumentTypeError(
            "size '%s' is not a number of bytes with an optional K, M or G" % text)
    size = int(digits) * UNITS[unit]
    if size <= 0 or size % 4:
        raise argparse.ArgumentTypeError(
            "size '%s' is not a positive multiple of 4 bytes (float32)" % text)
    return size


def parse_sizes(text):
    return [parse_size(part) for part in text.split(",")]


def busbw(nbytes, seconds, ranks):
    """Bus bandwidth in GB/s of an all-reduce, as nccl-tests and dt-bench."""
    algbw = nbytes / seconds / 1e9
    return algbw * 2 * (ranks - 1) / ranks


def human(nbytes):
    for unit in ("G", "M", "K"):
        if nbytes % UNITS[unit] == 0:
            return "%d %siB" % (nbytes // UNITS[unit], unit)
    return "%d B" % nbytes


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="all-reduce busbw from Python: dist_train.Communicator vs "
        "torch.distributed Gloo, same run, one machine")
    p.add_argument("--nproc", type=int, default=4, help="worker processes (default 4)")
    p.add_argument("--sizes", type=parse_sizes, default=parse_sizes("1M,16M,64M"),
                   help="comma-separated sizes in bytes, K/M/G suffixes (default 1M,16M,64M)")
    p.add_argument("--iters", type=int, default=10, help="timed iterations per size (default 10)")
    p.add_argument("--warmup", type=int, default=2, help="untimed iterations per size (default 2)")
    p.add_argument("--stat", choices=("median", "mean"), default="median",
                   help="a size's time over the timed calls (default median)")
    p.add_argument("--require-ratio", type=float, metavar="R",
                   help="exit 3 when ours/gloo busbw at the largest size is below R")
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds a worker may wait for the others (Gloo's timeout; default 300)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--gloo-port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--pin", action="store_true",
                   help="bind worker r to CPU r mod the CPU count")
    p.add_argument("--hog", action="store_true",
                   help="run a busy loop per CPU beside the workers")
    p.add_argument("--hog-nice", type=int, default=0, metavar="N",
                   help="the busy loops' nice value, 0-19 (default 0)")
    args = p.parse_args(argv)
    if args.nproc < 2:
        p.error("--nproc %d: need at least 2 processes" % args.nproc)
    if args.iters < 1 or args.warmup < 0:
        p.error("--iters must be >= 1 and --warmup >= 0")
    if not 0 <= args.hog_nice <= 19:
        p.error("--hog-nice %d: must be 0-19" % args.hog_nice)
    return args


# ---- launcher -----------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_env(rank, nproc, master_port, token):
    env = dict(os.environ)
    env.update(RANK=str(rank), WORLD_SIZE=str(nproc), LOCAL_RANK=str(rank),
               LOCAL_WORLD_SIZE=str(nproc), NODE_RANK="0", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(master_port), DT_JOB_TOKEN=token)
    env.setdefault("OMP_NUM_THREADS", "1")  # as torchrun sets for several workers
    # After the caller's PYTHONPATH, before site-packages: this checkout's package.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), PACKAGE_DIR) if p)
    return env


def missing_modules():
    missing = [m for m in ("numpy", "torch") if importlib.util.find_spec(m) is None]
    if importlib.util.find_spec("dist_train") is None and \
            not os.path.isdir(os.path.join(PACKAGE_DIR, "dist_train")):
        missing.append("dist_train")
    return missing


def wait_all(procs):
    """The first failure's exit status (the others are then stopped), else 0."""
    status = 0
    while any(p.poll() is None for p in procs):
        failed = [p.returncode for p in procs if p.returncode not in (None, 0)]
        if failed and status == 0:
            status = failed[0]
            for p in procs:
                if p.poll() is None:
                    p.terminate()
        time.sleep(0.05)
    return status or next((p.returncode for p in procs if p.returncode), 0)


def launch(args, argv):
    missing = missing_modules()
    if missing:
        print("python_vs_gloo: %s cannot import %s (Debian: run it with /usr/bin/python3; "
              "the package is looked for in %s)" % (sys.executable, ", ".join(missing),
                                                    PACKAGE_DIR), file=sys.stderr)
        return EXIT_WRONG
    master_port, gloo_port, token = free_port(), free_port(), secrets.token_hex(32)
    while gloo_port == master_port:
        gloo_port = free_port()
    cmd = [sys.executable, os.path.abspath(__file__), "--worker",
           "--gloo-port", str(gloo_port)] + argv
    hog = [sys.executable, "-c", "import os; os.nice(%d)\nwhile True: pass" % args.hog_nice]
    hogs = [subprocess.Popen(hog) for _ in range(len(os.sched_getaffinity(0)) if args.hog else 0)]
    procs = [subprocess.Popen(cmd, env=worker_env(r, args.nproc, master_port, token))
             for r in range(args.nproc)]
    try:
        status = wait_all(procs)
    except KeyboardInterrupt:
        for p in procs:
            p.terminate()
        status = wait_all(procs) or 130
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    if status < 0:
        print("python_vs_gloo: a worker died of signal %d" % -status, file=sys.stderr)
        return EXIT_WRONG
    return status


# ---- worker -------------------------------------------------------------------

class Ours:
    """dist_train.Communicator on numpy arrays."""

    def __init__(self, comm):
        self.comm = comm

    def wrap(self, array):
        return array

    def all_reduce(self, buf):
        self.comm.all_reduce(buf)

    def barrier(self):
        self.comm.barrier()


class Gloo:
    """torch.distributed (Gloo) on tensors that share the numpy array's memory."""

    def __init__(self, torch, dist):
        self.torch, self.dist = torch, dist

    def wrap(self, array):
        return self.torch.from_numpy(array)

    def all_reduce(self, buf):
        self.dist.all_reduce(buf)

    def barrier(self):
        self.dist.barrier()

    def reduce_f64(self, array, op):
        """Bookkeeping (wrong counts, times) over Gloo, so a broken dist_train cannot hide."""
        ops = {"sum": self.dist.ReduceOp.SUM, "max": self.dist.ReduceOp.MAX}
        self.dist.all_reduce(self.torch.from_numpy(array.reshape(-1)), op=ops[op])


def fill(array, pattern, rank):
    """Rank r holds (r + 1) * (i % 13), as dt-bench; refilled before every call."""
    import numpy as np
    np.multiply(pattern, rank + 1, out=array)


def count_wrong(array, pattern, ranks):
    import numpy as np
    return int(np.count_nonzero(array != pattern * (ranks * (ranks + 1) // 2)))


def check(sides, arrays, pattern, comm, gloo):
    """Wrong elements of each side's first result, summed over the ranks."""
    import numpy as np
    wrong = np.zeros(len(sides), np.float64)
    for i, side in enumerate(sides):
        fill(arrays[i], pattern, comm.rank)
        side.all_reduce(side.wrap(arrays[i]))
        wrong[i] = count_wrong(arrays[i], pattern, comm.size)
    gloo.reduce_f64(wrong, "sum")
    return [int(w) for w in wrong]


def time_size(sides, arrays, pattern, comm, gloo, args):
    """Median (or mean) over iterations of the slowest rank's seconds, per side."""
    import numpy as np
    bufs = [side.wrap(a) for side, a in zip(sides, arrays)]
    times = np.zeros((len(sides), args.iters), np.float64)
    for it in range(args.warmup + args.iters):
        order = range(len(sides)) if it % 2 == 0 else reversed(range(len(sides)))
        for i in order:
            fill(arrays[i], pattern, comm.rank)
            sides[i].barrier()
            t0 = time.perf_counter()
            sides[i].all_reduce(bufs[i])
            if it >= args.warmup:
                times[i, it - args.warmup] = time.perf_counter() - t0
    gloo.reduce_f64(times, "max")
    stat = statistics.mean if args.stat == "mean" else statistics.median
    return [stat(row) for row in times]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def header(comm, args, torch, cpus):
    """`cpus`: the workers' CPUs as nproc(1) counts them, before --pin."""
    import numpy as np
    import dist_train
    n = comm.size
    load = "%d processes oversubscribe %d CPUs" % (n, cpus) if n > cpus else "%d CPUs" % cpus
    print("# python_vs_gloo: %d ranks on 127.0.0.1; nproc %d (%s); load average %s"
          % (n, cpus, load, loadavg()))
    print("# dist_train %s (%s), transport: %s; torch %s gloo; numpy %s; python %s"
          % (dist_train.version(), os.environ.get("DT_LIBRARY", "library as the package finds it"),
             comm.describe(), torch.__version__, np.__version__, sys.version.split()[0]))
    print("# float32 sum in place; %d warm-up + %d timed calls per size, ours and gloo's "
          "alternating, each after a barrier; time = %s of the slowest rank's"
          % (args.warmup, args.iters, args.stat))
    print("# ranks %s; %s" % ("pinned one CPU each" if args.pin else "not pinned",
                              ("a busy loop per CPU beside them (nice %d)" % args.hog_nice)
                              if args.hog else "no other load"))
    print("# %12s %10s %12s %10s %12s %7s" % ("size(B)", "ours(us)", "ours busbw", "gloo(us)",
                                              "gloo busbw", "ratio"))


def verdict(rows, n, required):
    """Prints the summary lines; returns whether the ratio at the largest size holds."""
    nbytes, ours, gloo = rows[-1]
    ratio = busbw(nbytes, ours, n) / busbw(nbytes, gloo, n)
    print("all-reduce busbw %s, %d ranks, from Python: dist_train %.3f GB/s, gloo %.3f GB/s: %.2fx"
          % (human(nbytes), n, busbw(nbytes, ours, n), busbw(nbytes, gloo, n), ratio))
    print("ratio >= %g: %s" % (required, "yes" if ratio >= required else "no"))
    return ratio >= required


def run_sizes(comm, gloo, args):
    """Checks and times every size; rows of (bytes, ours s, gloo s), or None if wrong."""
    import numpy as np
    rows, sides = [], [Ours(comm), gloo]
    for nbytes in args.sizes:
        count = nbytes // 4
        pattern = (np.arange(count) % 13).astype(np.float32)
        arrays = [np.empty(count, np.float32) for _ in sides]
        wrong = check(sides, arrays, pattern, comm, gloo)
        if any(wrong):
            if comm.rank == 0:
                print("python_vs_gloo: %s: wrong elements summed over ranks: dist_train %d, "
                      "gloo %d" % (human(nbytes), wrong[0], wrong[1]), file=sys.stderr)
            return None
        ours, theirs = time_size(sides, arrays, pattern, comm, gloo, args)
        if comm.rank == 0:
            print("  %12d %10.1f %12.3f %10.1f %12.3f %6.2fx"
                  % (nbytes, ours * 1e6, busbw(nbytes, ours, comm.size), theirs * 1e6,
                     busbw(nbytes, theirs, comm.size), theirs / ours), flush=True)
        rows.append((nbytes, ours, theirs))
    return rows


def worker(args):
    import datetime

    import dist_train
    import torch
    import torch.distributed as dist

    cpus = sorted(os.sched_getaffinity(0))  # the machine's, before pinning
    if args.pin:
        os.sched_setaffinity(0, {cpus[int(os.environ["RANK"]) % len(cpus)]})
    torch.set_num_threads(1)
    os.environ.setdefault("USE_LIBUV", "0")  # Debian 13+'s torch has no libuv
    with dist_train.Communicator() as comm:
        dist.init_process_group(
            "gloo", init_method="tcp://127.0.0.1:%d" % args.gloo_port, rank=comm.rank,
            world_size=comm.size, timeout=datetime.timedelta(seconds=args.timeout))
        if comm.rank == 0:
            header(comm, args, torch, len(cpus))
        rows = run_sizes(comm, Gloo(torch, dist), args)
        dist.destroy_process_group()
        if rows is None:
            return EXIT_WRONG
        required = args.require_ratio if args.require_ratio is not None else 2.0
        ok = verdict(rows, comm.size, required) if comm.rank == 0 else True
    return EXIT_BELOW if args.require_ratio is not None and not ok else 0


def main(argv):
    args = parse_args(argv)
    return worker(args) if args.worker else launch(args, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
