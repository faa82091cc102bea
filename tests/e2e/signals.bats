#!/usr/bin/env bats
# Preemption warnings reach every worker (the plugin's relay), launchers
# survive them, and jobs without --dist-train keep Slurm's behaviour.
# Runs on the main cluster (proctrack/cgroup when the machine allows it);
# scripts/run-tests runs it again on clusters with proctrack/pgid and
# linuxproc (DT_PROCTRACK tells which).

load common

setup() {
  require_cluster
  make_outdir
  PROCTRACK=${DT_PROCTRACK:-$(sed -n 's/^ProctrackType=proctrack\///p' "$SLURM_CONF")}
  DTRUN="$DT_REPO/build/tools/dt-run"
  WIRE="$DT_REPO/build/tools/dt-wire"
}

teardown() {
  if [[ -n ${JOB:-} ]]; then scancel "$JOB" 2>/dev/null || true; fi
  cleanup_outdir
}

# submit ARGS... SCRIPT: starts the job in the background (JOB).
submit() {
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/out.txt" "$@")
}

# wait_ready N: until N workers said they are ready.
wait_ready() {
  local n=0
  for _ in $(seq 300); do
    n=$(find "$OUT" -name 'ready.*' | wc -l)
    ((n >= $1)) && return 0
    sleep 0.1
  done
  echo "only $n of $1 workers ready" >&2
  cat "$OUT/out.txt" >&2 || true
  return 1
}

# deliveries: "FILE:COUNT" for every catching worker's report.
deliveries() {
  local f
  for f in "$OUT"/got.*; do
    if [[ -e $f ]]; then echo "$(basename "$f"):$(grep -c . "$f")"; fi
  done
}

# warn_node_mode_job READY CATCHING [OPTION]: submits job.sh on 2 nodes
# with OPTION (default: the plugin in node mode), warns it once READY
# workers are up, and checks that the step completed normally and each of
# the CATCHING workers got the warning exactly once.
warn_node_mode_job() {
  local state
  submit "${3:---dist-train=mode=node}" -N2 --ntasks-per-node=1 job.sh
  wait_ready "$1"
  scancel --signal=USR1 "$JOB"
  state=$(wait_job "$JOB" 60)
  cat "$OUT/out.txt"
  deliveries
  [ "$state" = COMPLETED ]
  grep -qx "srun rc=0" "$OUT/out.txt"
  [ "$(deliveries | grep -c ':1$')" -eq "$2" ]
  [ "$(deliveries | wc -l)" -eq "$2" ]
  no_leftovers
}

# no_leftovers: nothing of the test user still runs once the job ended.
no_leftovers() {
  for _ in $(seq 50); do
    pgrep -u "$DT_USER" >/dev/null || return 0
    sleep 0.1
  done
  ps -o pid,ppid,pgid,comm,args -u "$DT_USER" >&2
  return 1
}

@test "a torchrun-like launcher: every catching worker (setsid, bash trap) gets the warning once; launcher and non-catching workers live" {
  [[ $PROCTRACK == cgroup ]] || skip "proctrack/$PROCTRACK signals the launcher itself (docs/preemption.md, Limits)"
  write_script job.sh <<EOS
#!/bin/bash
srun python3 fake_launcher.py 3 python3 warned_worker.py $OUT mix
echo "srun rc=\$?"
EOS
  # per node: the python and the bash worker hear it (the third does not catch it)
  warn_node_mode_job 6 4
}

@test "dt-run: every worker gets the warning once (no second copy from dt-run), dt-run lives, the step ends normally" {
  write_script job.sh <<EOS
#!/bin/bash
srun $DTRUN --nproc 2 -- python3 warned_worker.py $OUT catch
echo "srun rc=\$?"
EOS
  warn_node_mode_job 4 4
}

@test "dt-wire without the plugin: a torchrun-like launcher's catching workers get the warning once; launcher and the others live" {
  [[ $PROCTRACK == cgroup ]] || skip "proctrack/$PROCTRACK signals the launcher itself (docs/preemption.md, Limits)"
  write_script job.sh <<EOS
#!/bin/bash
eval "\$($WIRE --job-env)"
srun $WIRE --dist-train=mode=node -- python3 fake_launcher.py 3 python3 warned_worker.py $OUT mix
echo "srun rc=\$?"
EOS
  warn_node_mode_job 6 4 --dist-train=off
}

@test "dt-wire without the plugin + dt-run: every worker gets the warning once, dt-run lives" {
  write_script job.sh <<EOS
#!/bin/bash
eval "\$($WIRE --job-env)"  # with the cluster's proctrack: linuxproc needs no relay
srun $WIRE --dist-train=mode=node -- $DTRUN --nproc 2 -- python3 warned_worker.py $OUT catch
echo "srun rc=\$?"
EOS
  warn_node_mode_job 4 4 --dist-train=off
}

@test "dt-wire in a --dist-train step + dt-run: no second relay, every worker gets the warning once" {
  write_script job.sh <<EOS
#!/bin/bash
srun $WIRE --dist-train=mode=node -- $DTRUN --nproc 2 -- python3 warned_worker.py $OUT catch
echo "srun rc=\$?"
EOS
  warn_node_mode_job 4 4
}

@test "without --dist-train: Slurm's own delivery, no relay" {
  write_script job.sh <<EOS
#!/bin/bash
srun bash -c 'echo "relay=\${DT_SIGNAL_RELAY:-none}" > $OUT/env.\$SLURM_PROCID; exec python3 fake_launcher.py 2 python3 warned_worker.py $OUT catch'
echo "srun rc=\$?"
EOS
  submit -N2 --ntasks-per-node=1 job.sh
  wait_ready 4
  scancel --signal=USR1 "$JOB"
  if [[ $PROCTRACK == pgid ]]; then
    # pgid never signals or kills setsid processes, and these hold the
    # step's output open: end them by hand once they had their chance.
    sleep 2
    pkill -KILL -u "$DT_USER" -f warned_worker || true
  fi
  wait_job "$JOB" 60
  cat "$OUT/out.txt"
  deliveries
  [ "$(cat "$OUT/env.0" "$OUT/env.1")" = "$(printf 'relay=none\nrelay=none')" ]
  # the launcher died of the warning in every proctrack mode
  grep -q "srun rc=[1-9]" "$OUT/out.txt"
  if [[ $PROCTRACK == linuxproc ]]; then
    [ "$(deliveries | grep -c ':1$')" -eq 4 ]  # Slurm signals every process
  else
    [ -z "$(deliveries)" ]  # setsid workers never hear it
  fi
  no_leftovers
}

@test "tasks that end at once end their steps (the relay never misses its child's exit)" {
  for i in $(seq 30); do
    timeout 20 bash -c "cd $OUT && runuser -u $DT_USER -- env SLURM_CONF=$SLURM_CONF srun -N2 -n4 --dist-train true" 2>/dev/null ||
      { echo "step $i did not end"; return 1; }
  done
  no_leftovers
}

@test "exit codes, signals and plain scancel are the same with and without the relay" {
  write_script job.sh <<'EOS'
#!/bin/bash
for opt in --dist-train=off --dist-train; do
  for cmd in 'exit 0' 'exit 3' 'kill -SEGV $$' 'kill -KILL $$' 'kill -USR1 $$'; do
    srun -N1 -n1 $opt bash -c "$cmd" 2>/dev/null
    echo "$opt '$cmd' rc=$?"
  done
done
EOS
  run_job -N1 job.sh
  cat "$OUT/out.txt" 2>/dev/null || cat "$OUT"/slurm-*.out
  out=$(cat "$OUT/slurm-$JOB.out")
  without=$(grep -- '--dist-train=off' <<<"$out" | sed 's/^--dist-train=off //')
  with=$(grep -- '^--dist-train ' <<<"$out" | sed 's/^--dist-train //')
  [ "$(wc -l <<<"$with")" -eq 5 ]
  [ "$with" = "$without" ]
  grep -qx -- "--dist-train 'exit 3' rc=3" <<<"$out"
  # plain scancel (TERM) of a running step, with the relay: CANCELLED
  write_script long.sh <<EOS
#!/bin/bash
srun bash -c 'sleep 300 & sleep 300 & touch $OUT/ready.\$SLURM_PROCID; wait'
EOS
  submit --dist-train=mode=node -N2 --ntasks-per-node=1 long.sh
  wait_ready 2
  scancel "$JOB"
  [ "$(wait_job "$JOB" 60)" = CANCELLED ]
  no_leftovers
}
