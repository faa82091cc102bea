#!/usr/bin/env bats
# dt-run, the C++ runtime, the example trainer and dt-bench on one machine
# (no Slurm): dt-run --standalone.

# warn_when_ready DIR PID: once workers 0 and 1 made DIR/ready.R, sends
# USR1 to dt-run (PID) and sets status to its exit status.
warn_when_ready() {
  for _ in $(seq 200); do
    if [ -e "$1/ready.0" ] && [ -e "$1/ready.1" ]; then break; fi
    sleep 0.05
  done
  kill -USR1 "$2"
  status=0
  wait "$2" || status=$?
}

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  RUN="$REPO/build/tools/dt-run"
}

@test "dt-run gives each worker the full contract and prefixes its output with the rank" {
  run "$RUN" --standalone --nproc 3 -- bash -c 'echo "$RANK/$WORLD_SIZE local $LOCAL_RANK/$LOCAL_WORLD_SIZE node $NODE_RANK/$GROUP_WORLD_SIZE $MASTER_ADDR ${#DT_JOB_TOKEN}"'
  [ "$status" -eq 0 ]
  [ "$(printf '%s\n' "${lines[@]}" | sort | tr '\n' '|')" = "[0] 0/3 local 0/3 node 0/1 127.0.0.1 64|[1] 1/3 local 1/3 node 0/1 127.0.0.1 64|[2] 2/3 local 2/3 node 0/1 127.0.0.1 64|" ]
}

@test "the last words of a worker that exits right after writing them are never lost" {
  # A worker's final output can still be in its pipe when dt-run reaps it.
  for i in $(seq 40); do
    "$RUN" --standalone --nproc 4 -- sh -c 'seq 1000; echo "last of $RANK"' >"$BATS_TEST_TMPDIR/out.$i"
  done
  [ "$(cat "$BATS_TEST_TMPDIR"/out.* | grep -c '^\[[0-3]\] last of [0-3]$')" -eq 160 ]
  [ "$(cat "$BATS_TEST_TMPDIR"/out.* | grep -c '^\[[0-3]\] 1000$')" -eq 160 ]
}

@test "the trainer converges, and 4 ranks give the 1-rank result" {
  run "$RUN" --standalone --nproc 1 -- "$REPO/build/examples/train_linear" 7
  [ "$status" -eq 0 ]
  one=$(grep -o 'weights .*' <<<"$output")
  run "$RUN" --standalone --nproc 4 -- "$REPO/build/examples/train_linear" 7
  [ "$status" -eq 0 ]
  four=$(grep -o 'weights .*' <<<"$output")
  [[ "$output" == *"step 199 loss 0.0000"* ]]
  python3 - "$one" "$four" <<'PY'
import sys
a = [float(x) for x in sys.argv[1].split()[1:]]
b = [float(x) for x in sys.argv[2].split()[1:]]
assert len(a) == len(b) == 9, (a, b)
assert all(abs(x - y) < 1e-9 for x, y in zip(a, b)), (a, b)
true = [0.25 * (k + 1) for k in range(8)] + [0.5]
assert all(abs(x - t) < 0.01 for x, t in zip(a, true)), a
PY
}

@test "dt-bench checks every size and passes" {
  run "$RUN" --standalone --nproc 3 -- "$REPO/build/tools/dt-bench" -b 4096 -e 1048576 -n 2 -w 1
  [ "$status" -eq 0 ]
  [[ "$output" == *"process start to communicator ready"* ]]
  [ "$(grep -cE '^\[0\] +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0$' <<<"$output")" -eq 9 ]
}

@test "the first failure's exit code is propagated and the others are stopped" {
  start=$SECONDS
  run "$RUN" --standalone --nproc 3 -- bash -c '[ "$RANK" = 1 ] && exit 7; sleep 30'
  [ "$status" -eq 7 ]
  (( SECONDS - start < 15 ))
  [[ "$output" == *"dt-run: worker rank 1 (pid "*") failed with exit code 7; stopping the others"* ]]
}

@test "a group is restarted up to --max-restarts times" {
  marker="$BATS_TEST_TMPDIR/attempts"
  run "$RUN" --standalone --nproc 2 --max-restarts 2 -- bash -c 'echo x >> "$1.$RANK"; sleep 0.3; [ "$DT_RESTART_COUNT" = 2 ] || exit 3' _ "$marker"
  [ "$status" -eq 0 ]
  [ "$(wc -l <"$marker.0")" -eq 3 ]
  run "$RUN" --standalone --nproc 1 --max-restarts 1 -- bash -c 'exit 5'
  [ "$status" -eq 5 ]
}

@test "SIGUSR1 reaches every worker and does not kill dt-run; SIGTERM stops them" {
  dir=$BATS_TEST_TMPDIR
  cat >"$dir/worker.sh" <<'EOS'
#!/bin/bash
trap 'echo "usr1 $RANK" >> "$1/got"; exit 0' USR1
touch "$1/ready.$RANK"
while :; do sleep 0.05; done
EOS
  chmod +x "$dir/worker.sh"
  "$RUN" --standalone --nproc 2 -- "$dir/worker.sh" "$dir" 3>&- &
  pid=$!
  warn_when_ready "$dir" "$pid"
  [ "$status" -eq 0 ]
  [ "$(sort "$dir/got" | tr '\n' '|')" = "usr1 0|usr1 1|" ]
  "$RUN" --standalone --nproc 2 -- sleep 30 3>&- &
  pid=$!
  sleep 0.5
  kill -TERM "$pid"
  status=0
  wait "$pid" || status=$?
  [ "$status" -eq $((128 + 15)) ]
}

@test "workers that stop for preemption (exit 75) make dt-run exit 75, without a restart" {
  dir=$BATS_TEST_TMPDIR
  cat >"$dir/worker.sh" <<'EOS'
#!/bin/bash
echo "start $RANK restart $DT_RESTART_COUNT" >> "$1/starts"
trap 'exit 75' USR1
touch "$1/ready.$RANK"
while :; do sleep 0.05; done
EOS
  chmod +x "$dir/worker.sh"
  "$RUN" --standalone --nproc 2 --max-restarts 2 -- "$dir/worker.sh" "$dir" 3>&- 2>"$dir/err" &
  pid=$!
  warn_when_ready "$dir" "$pid"
  cat "$dir/err"
  [ "$status" -eq 75 ]
  [ "$(wc -l <"$dir/starts")" -eq 2 ]  # no restart
  grep -q "dt-run: preemption warning (User defined signal 1); forwarded to every worker" "$dir/err"
  grep -q "dt-run: workers stopped for preemption: exit 75" "$dir/err"
  # one worker preempted, the other failing: the failure is what counts
  run "$RUN" --standalone --nproc 2 -- bash -c '[ "$RANK" = 0 ] && exit 75; sleep 0.2; exit 3'
  [ "$status" -eq 3 ]
}

@test "outside a dist-train step dt-run says what is missing" {
  run env -u MASTER_ADDR -u PET_MASTER_ADDR "$RUN" -- true
  [ "$status" -eq 1 ]
  [ "$output" = "dt-run: MASTER_ADDR is not set: run dt-run under srun --dist-train=mode=node, or use --standalone" ]
}
