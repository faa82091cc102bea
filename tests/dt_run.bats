#!/usr/bin/env bats
# dt-run's output under load: every line a worker wrote before it exited
# arrives, and a worker's child that keeps the pipes open cannot hold
# dt-run past its grace period.

# shellcheck disable=SC2016 # $RANK is expanded by each worker's shell

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  BUILD=${DT_TEST_BUILD:-$REPO/build}
  RUN="$BUILD/tools/dt-run"
  BUSY=()
}

teardown() {
  local pid
  for pid in "${BUSY[@]}"; do kill "$pid" 2>/dev/null || true; done
}

# Keeps both cores busy (the load that exposed the lost lines).
load_cpus() {
  local i
  for i in 1 2 3; do
    sh -c 'while :; do :; done' &
    BUSY+=("$!")
  done
}

@test "under load, every worker's last lines arrive in each of 20 runs" {
  load_cpus
  local i out
  for i in $(seq 20); do
    out=$("$RUN" --standalone --nproc 4 -- sh -c 'seq 2000; printf "last of %s\n" "$RANK"; printf "no newline %s" "$RANK" >&2')
    [ "$(grep -c '^\[[0-3]\] last of [0-3]$' <<<"$out")" -eq 4 ] || {
      echo "run $i lost lines"
      return 1
    }
    [ "$(grep -c '^\[[0-3]\] 2000$' <<<"$out")" -eq 4 ]
  done
}

@test "the partial last line on stderr arrives too, with a newline" {
  run "$RUN" --standalone --nproc 2 -- sh -c 'printf "tail %s" "$RANK" >&2'
  [ "$status" -eq 0 ]
  [ "$(printf '%s\n' "${lines[@]}" | sort | tr '\n' '|')" = "[0] tail 0|[1] tail 1|" ]
}

@test "a worker's child holding the pipes open does not hold dt-run past the grace" {
  local start took
  start=$(date +%s%N)
  run timeout -s KILL 30 "$RUN" --standalone --nproc 2 -- sh -c 'echo "bye $RANK"; (while :; do echo chatter; sleep 0.1; done) & exit 0'
  took=$((($(date +%s%N) - start) / 1000000))
  [ "$status" -eq 0 ]
  [[ "$output" == *"[0] bye 0"* ]]
  [[ "$output" == *"[1] bye 1"* ]]
  [[ "$output" == *"output pipe(s) still open 2000 ms after the last worker exited"* ]]
  [ "$took" -lt 8000 ]
}

# living PID: the process exists and is not a zombie (an orphan's reaper
# may be slow).
living() {
  local state
  state=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

@test "workers die with dt-run: a SIGKILLed dt-run leaves no worker behind (their own process groups escape proctrack/pgid)" {
  local pid pids i p alive
  "$RUN" --standalone --nproc 3 -- sh -c 'echo "$$" >"$0/tmp-$RANK" && mv "$0/tmp-$RANK" "$0/worker-$RANK"; exec sleep 300' "$BATS_TEST_TMPDIR" >/dev/null 2>&1 3>&- &
  pid=$!
  for i in $(seq 100); do
    [ "$(ls "$BATS_TEST_TMPDIR"/worker-* 2>/dev/null | wc -l)" -eq 3 ] && break
    sleep 0.05
  done
  pids=$(cat "$BATS_TEST_TMPDIR"/worker-*)
  BUSY+=($pids)  # teardown kills what is left if the test fails
  [ "$(wc -w <<<"$pids")" -eq 3 ]
  for i in $pids; do living "$i"; done
  kill -KILL "$pid"
  wait "$pid" || true
  for i in $(seq 100); do
    alive=0
    for p in $pids; do living "$p" && alive=$((alive + 1)); done
    [ "$alive" -eq 0 ] && break
    sleep 0.05
  done
  [ "$alive" -eq 0 ]
}
