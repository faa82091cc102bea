#!/usr/bin/env python3
"""A worker for the signal tests. Usage: warned_worker.py OUTDIR [KIND]
KIND catch (default): handles SIGUSR1 and appends one line per delivery to
  OUTDIR/got.HOST.LOCAL_RANK.PID; after the first one it lingers 1 s (a
  duplicate would be counted), then exits 0.
KIND bash: the same from a bash worker with `trap` (exec'd), so a warning
  that was ignored at bash's start (SIG_IGN is inherited) is caught.
KIND plain: no handler: waits until its node's other workers reported, then
  exits 0; if the warning reached it, it dies of it (exit 138).
KIND mix: catch, bash, plain by LOCAL_RANK modulo 3.
Each says ready by creating OUTDIR/ready.HOST.LOCAL_RANK.PID."""
import glob
import os
import signal
import socket
import sys
import time

out = sys.argv[1]
kind = sys.argv[2] if len(sys.argv) > 2 else "catch"
host = socket.gethostname()
if kind == "mix":
    kind = ["catch", "bash", "plain"][int(os.environ.get("LOCAL_RANK", "0")) % 3]
tag = "%s.%s.%d" % (host, os.environ.get("LOCAL_RANK", "0"), os.getpid())

if kind == "bash":
    got = os.path.join(out, "got." + tag)
    script = (
        'trap \'echo USR1 >> "%s"\' USR1; touch "%s"; '
        'for i in $(seq 600); do [ -s "%s" ] && break; sleep 0.1; done; '
        "sleep 1" % (got, os.path.join(out, "ready." + tag), got)
    )
    os.execvp("bash", ["bash", "-c", script])

got = []
if kind == "catch":
    signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
open(os.path.join(out, "ready." + tag), "w").close()
deadline = time.time() + 60
if kind == "catch":
    while not got and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1)
    with open(os.path.join(out, "got." + tag), "w") as f:
        f.write("USR1\n" * len(got))
else:
    # plain: outlive the others' reports by a little
    while time.time() < deadline:
        if glob.glob(os.path.join(out, "got.%s.*" % host)):
            break
        time.sleep(0.05)
    time.sleep(1.5)
