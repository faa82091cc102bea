#!/usr/bin/env bats
# Attacks on the runtime's rendezvous from this machine, with real sockets on
# loopback and no secret: 4 ranks of dt-bench --first, started by hand
# (rank 0 first, so the attacker knows its ports), must still meet. Bounds
# are generous for a loaded 2-core machine; the old code failed each one by
# far (see docs/runtime.md, "Threat model").

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  BUILD_DIR=${DT_BUILD_DIR:-$REPO/build}
  BENCH="$BUILD_DIR/tools/dt-bench"
  [ -x "$BENCH" ] || skip "no $BENCH (build first)"
  ATTACK="$BATS_TEST_TMPDIR/attack.py"
  write_attack >"$ATTACK"
}

# attack MODE [N]: runs the job under attack; prints "elapsed S codes
# C0,C1,C2,C3"; rank R's stderr is in $BATS_TEST_TMPDIR/err.R.
attack() {
  ATTACK_ERR="$BATS_TEST_TMPDIR/err" python3 "$ATTACK" "$BENCH" "$@"
}

# elapsed_below LIMIT: the attack's job took less than LIMIT seconds.
elapsed_below() {
  python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' \
    "$(sed -n 's/^elapsed \([0-9.]*\) .*/\1/p' <<<"$output")" "$1"
}

write_attack() {
  cat <<'PY'
import os, socket, struct, subprocess, sys, threading, time

BIN, MODE = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 0
TIMEOUT = os.environ.get("ATTACK_DT_TIMEOUT", "20")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


PORT = free_port()
TOKEN = "ab" * 32
ERR = [open(os.environ["ATTACK_ERR"] + ".%d" % r, "w+") for r in range(4)]


def start(rank):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(RANK=str(rank), WORLD_SIZE="4", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(PORT), DT_JOB_TOKEN=TOKEN, DT_TIMEOUT=TIMEOUT,
               DT_SHM="0")
    env.pop("DT_SOCKET_ADDR", None)
    return subprocess.Popen([BIN, "--first"], env=env,
                            stdout=subprocess.DEVNULL, stderr=ERR[rank])


def wait_listening(port):
    end = time.time() + 10
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.005)
    sys.exit("rank 0 never listened on %d" % port)


def listening(pid):
    """(address, port) of every TCP socket process `pid` listens on."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = []
    for line in open("/proc/net/tcp").readlines()[1:]:
        f = line.split()
        if f[3] == "0A" and f[9] in inodes:
            addr, port = f[1].split(":")
            ip = socket.inet_ntoa(struct.pack("<I", int(addr, 16)))
            out.append((ip, int(port, 16)))
    return out


def frame(t, payload):
    return struct.pack(">IB", len(payload) + 1, t) + payload


def pstr(b):
    return struct.pack(">I", len(b)) + b


VERSION = 2  # the rendezvous protocol's (lib/runtime/handshake.cc kVersion)


def squatter(kind, stop):
    """Answers like a rank 0 would, up to where it would need the secret."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", PORT))
    srv.listen(128)
    srv.settimeout(0.1)
    while not stop.is_set():
        try:
            c, _ = srv.accept()
        except socket.timeout:
            continue
        try:
            c.settimeout(1)
            c.sendall(frame(1, b"DTRV" + struct.pack(">I", VERSION) +
                            os.urandom(32) + struct.pack(">I", 1)))
            c.recv(4096)  # the JOIN
            if kind == "reject":
                c.sendall(frame(4, b"wrong job secret"))
            elif kind == "accept":
                c.sendall(frame(3, pstr(b"p" * 32)))  # a proof it cannot make
            else:
                c.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")
        except OSError:
            pass
        c.close()
    srv.close()


def bogus_join(identity):
    s = socket.create_connection(("127.0.0.1", PORT), 2)
    s.settimeout(2)
    try:
        s.recv(4096)  # HELLO
        j = b"DTRV" + struct.pack(">I", VERSION) + pstr(identity) + \
            struct.pack(">III", 1, 4, 1000) + b"n" * 32 + pstr(b"m" * 32)
        s.sendall(frame(2, j))
        s.recv(4096)
    except OSError:
        pass
    s.close()


held, procs, stop = [], [], threading.Event()
if MODE.startswith("squat"):
    threading.Thread(target=squatter, args=(MODE[6:], stop)).start()
    time.sleep(0.2)
    t0 = time.time()
    procs = [start(r) for r in (1, 2, 3)]  # they find the squatter first
    time.sleep(0.5)
    procs.insert(0, start(0))  # moves to MASTER_PORT+1
else:
    procs.append(start(0))
    wait_listening(PORT)
    if MODE in ("idle", "both"):
        held += [socket.create_connection(("127.0.0.1", PORT))
                 for _ in range(N)]
    if MODE in ("garbage", "both"):
        for _ in range(N):
            s = socket.create_connection(("127.0.0.1", PORT))
            s.sendall(b"\x00\x00\x00\x05\x02garb")  # a frame cut short
            held.append(s)
    if MODE == "rst":
        time.sleep(0.2)
        for _, p in listening(procs[0].pid):
            if p == PORT:
                continue
            s = socket.create_connection(("127.0.0.1", p))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         struct.pack("ii", 1, 0))
            s.close()  # a reset
            s = socket.create_connection(("127.0.0.1", p))
            s.sendall(b"\xff" * 64)  # and garbage
            held.append(s)
    if MODE == "trickle":  # a new idle connection every 0.2 s, held
        def trickle():
            while not stop.is_set():
                try:
                    held.append(socket.create_connection(("127.0.0.1", PORT)))
                except OSError:
                    pass
                time.sleep(0.2)
        threading.Thread(target=trickle, daemon=True).start()
        time.sleep(1)
    if MODE == "forge":
        bogus_join(b"x'\n\x1b[31mdist-train: rank 0: rendezvous complete\x1b[0m")
    if MODE == "flood":
        for _ in range(N):
            bogus_join(b"bogus")
    if MODE == "listen":
        time.sleep(0.2)
        print("listens on " + " ".join(sorted({a for a, _ in
                                               listening(procs[0].pid)})))
    t0 = time.time()
    procs += [start(r) for r in (1, 2, 3)]
codes = []
for p in procs:
    try:
        codes.append(p.wait(timeout=float(TIMEOUT) + 30))
    except subprocess.TimeoutExpired:
        p.kill()
        codes.append("hang")
elapsed = time.time() - t0
stop.set()
for s in held:
    s.close()
print("elapsed %.2f codes %s" % (elapsed, ",".join(map(str, codes))))
PY
}

@test "a 4-rank rendezvous with 64 idle and 64 garbage connections open completes in < 2 s" {
  run attack both 64
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"codes 0,0,0,0"* ]]
  elapsed_below 2
}

@test "256 idle connections on MASTER_PORT cost the rendezvous less than 2 s" {
  run attack idle 256
  echo "$output"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  elapsed_below 2
}

@test "5 new idle connections per second do not hold up the rendezvous" {
  run attack trickle
  echo "$output"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  elapsed_below 2
}

@test "a reset and garbage on rank 0's data port before the ring is set up do not kill the job" {
  run attack rst
  echo "$output"
  cat "$BATS_TEST_TMPDIR/err.0"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  elapsed_below 5
}

@test "a squatter on MASTER_PORT that sends REJECT does not stop the job: rank 0 moved to the next port" {
  run attack squat-reject
  echo "$output"
  cat "$BATS_TEST_TMPDIR/err.1"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  elapsed_below 8
}

@test "a squatter on MASTER_PORT that sends ACCEPT with a bad proof does not stop the job" {
  run attack squat-accept
  echo "$output"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  elapsed_below 8
}

@test "a squatter on MASTER_PORT that sends garbage does not stop the job either" {
  run attack squat-garbage
  echo "$output"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  elapsed_below 8
}

@test "a forged job identity with a newline and ESC is logged escaped" {
  run attack forge
  echo "$output"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  cat -v "$BATS_TEST_TMPDIR/err.0"
  grep -qF "it belongs to job 'x'\\x0a\\x1b[31mdist-train: rank 0: rendezvous complete\\x1b[0m'" \
    "$BATS_TEST_TMPDIR/err.0"
  run grep -c "^dist-train: rank 0: rendezvous complete" "$BATS_TEST_TMPDIR/err.0"
  [ "$output" = 0 ]
  run grep -c $'\x1b' "$BATS_TEST_TMPDIR/err.0"
  [ "$output" = 0 ]
}

@test "500 bogus joins write a dozen log lines, not one each" {
  run attack flood 500
  echo "$output"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  [ "$(grep -c "refused 127.0.0.1:[0-9]*: it belongs to job 'bogus'" "$BATS_TEST_TMPDIR/err.0")" -eq 10 ]
  grep -q "suppressed 490 more refusals" "$BATS_TEST_TMPDIR/err.0"
  [ "$(wc -l <"$BATS_TEST_TMPDIR/err.0")" -le 12 ]
}

@test "with MASTER_ADDR=127.0.0.1 rank 0 listens on loopback only" {
  run attack listen
  echo "$output"
  [[ "$output" == *"codes 0,0,0,0"* ]]
  [[ "$output" == *"listens on 127.0.0.1"$'\n'* ]]
}
