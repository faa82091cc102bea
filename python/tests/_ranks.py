"""Helpers of the Python tests: run snippets in fresh interpreters, alone or
as the ranks of a job on 127.0.0.1."""
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import textwrap
import time

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYTHON_DIR)

# Everything a launcher or Slurm may have set in the environment of the test
# run: each test sets what it means.
_CONTRACT = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK",
             "MASTER_ADDR", "MASTER_PORT")
_KEEP = ("DT_LIBRARY",)


def _scrubbed(name):
    if name in _KEEP:
        return False
    return name in _CONTRACT or name.startswith(("SLURM_", "DT_", "PET_", "TORCHELASTIC_"))


def clean_env(**extra):
    """os.environ without the job contract, with PYTHONPATH at this
    checkout's package, plus `extra` (a value of None removes it)."""
    env = {k: v for k, v in os.environ.items() if not _scrubbed(k)}
    env["PYTHONPATH"] = PYTHON_DIR
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Debian 13+'s torch (2.x) is built without libuv, which its TCPStore
    # asks for by default (docs/user-guide.md); torch 1.13 ignores this.
    env.setdefault("USE_LIBUV", "0")
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


@contextlib.contextmanager
def patched_environ(**values):
    """os.environ of this process without the contract, plus `values`, for
    the duration of a with block (the library reads it through getenv)."""
    saved = dict(os.environ)
    try:
        for key in [k for k in os.environ if _scrubbed(k)]:
            del os.environ[key]
        for key, value in values.items():
            os.environ[key] = str(value)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# How long a run that imports torch may take: seconds alone, but a CI
# machine building beside it took over 60 s for two ranks (24.11 root).
TORCH_TIMEOUT = 300


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_python(code, env=None, timeout=60, **popen):
    """Runs `code` in /usr/bin/python3 (this interpreter); CompletedProcess."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout, **popen)


def run_ranks(code, size, extra_env=None, rank_env=None, timeout=60):
    """Runs `code` as ranks 0..size-1 of one job (MASTER_ADDR=127.0.0.1, a
    free port, a fresh DT_JOB_TOKEN); [CompletedProcess] by rank. rank_env:
    {rank: {VAR: value}}."""
    job = dict(WORLD_SIZE=size, LOCAL_WORLD_SIZE=size, MASTER_ADDR="127.0.0.1",
               MASTER_PORT=free_port(), DT_JOB_TOKEN=secrets.token_hex(32), DT_TIMEOUT=30,
               PYTHONFAULTHANDLER=1)
    job.update(extra_env or {})
    procs = []
    try:
        for rank in range(size):
            env = clean_env(RANK=rank, LOCAL_RANK=rank, NODE_RANK=0, **job,
                            **(rank_env or {}).get(rank, {}))
            procs.append(subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        results = []
        deadline = time.monotonic() + timeout
        for rank, proc in enumerate(procs):
            try:
                out, err = proc.communicate(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise AssertionError("rank %d still ran after %d s; each rank's output, with the "
                                     "Python stacks of those still running:\n%s"
                                     % (rank, timeout, _stop_and_describe(procs))) from None
            results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _stop_and_describe(procs):
    """Ends the ranks still running with SIGABRT (faulthandler, on in
    run_ranks, prints every thread's stack first); describe() of all."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGABRT)
    results = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return describe(results)


def torch_available():
    """Whether this interpreter can import torch (asked in a subprocess, so
    the test process itself stays without it)."""
    if not hasattr(torch_available, "answer"):
        probe = subprocess.run([sys.executable, "-c", "import torch.distributed as d; "
                                "assert d.is_available()"], capture_output=True)
        torch_available.answer = probe.returncode == 0
    return torch_available.answer


def describe(results):
    return "\n".join("rank %d: rc %d\nstdout: %s\nstderr: %s" % (i, r.returncode, r.stdout,
                                                                 r.stderr[-3000:])
                     for i, r in enumerate(results))
