#!/usr/bin/env python3
"""A torchrun-like launcher for the signal tests: starts N copies of a
command, each in its own session (torchrun's start_new_session=True), does
NOT handle SIGUSR1 (an unhandled warning kills it, as it kills torchrun),
waits for all of them and exits with the first non-zero status."""
import os
import subprocess
import sys


def main():
    n = int(sys.argv[1])
    cmd = sys.argv[2:]
    procs = []
    for i in range(n):
        env = dict(os.environ, LOCAL_RANK=str(i), LOCAL_WORLD_SIZE=str(n))
        procs.append(subprocess.Popen(cmd, env=env, start_new_session=True))
    rc = 0
    for p in procs:
        r = p.wait()
        rc = rc or (r if r >= 0 else 128 - r)
    sys.exit(rc)


if __name__ == "__main__":
    main()
