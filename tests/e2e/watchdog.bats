#!/usr/bin/env bats
# The hang watchdog (--dist-train=watchdog=SECONDS, docs/user-guide.md
# "Hang watchdog") on the local cluster: a rank stopped with SIGSTOP in the
# middle of training is named within SECONDS + 30 s, every rank's stacks
# are in the job's directory, and the step ends; a job that keeps going is
# left alone; a bad value is refused at submit time.

load common

setup() {
  require_cluster
  make_outdir
  TRAIN="$DT_REPO/build/examples/train_linear"
}

teardown() {
  cleanup_outdir
}

@test "a rank stopped with SIGSTOP is named, every rank's stacks are kept, the step ends" {
  write_script job.sh <<EOS
#!/bin/bash
srun --dist-train=watchdog=10 $TRAIN 7 100000 50
echo "srun exit \$?"
EOS
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" -N4 --ntasks-per-node=1 job.sh)
  local pid="" i
  for i in $(seq 300); do pid=$(pid_of_rank 2) && break; sleep 0.1; done
  [ -n "$pid" ]
  sleep 3 # training under way
  kill -STOP "$pid"
  stopped=$SECONDS
  state=$(wait_job "$JOB" 60)
  took=$((SECONDS - stopped))
  cat "$OUT/slurm-$JOB.out"
  echo "ended $took s after the SIGSTOP"
  [ "$state" = COMPLETED ]
  [ "$took" -le 40 ]
  dir="$OUT/dist-train-watchdog-$JOB.0"
  grep -q "^dist-train: watchdog: no rank progressed for 10 s; 4 of 4 ranks reported, stacks in $dir\$" "$OUT/slurm-$JOB.out"
  grep -q "^dist-train: watchdog: rank 2 on node3 (pid $pid) did not progress: stopped (SIGSTOP or a debugger), after all_reduce #[0-9]*; the others are inside all_reduce #[0-9]*\$" "$OUT/slurm-$JOB.out"
  run grep -c 'did not progress' "$OUT/slurm-$JOB.out"
  [ "$output" = 1 ]
  grep -q '^dist-train: watchdog: ending the step' "$OUT/slurm-$JOB.out"
  grep -q '^srun exit [1-9]' "$OUT/slurm-$JOB.out"
  for r in 0 1 2 3; do [ -s "$dir/rank-$r.stacks" ]; done
  grep -q 'native backtrace of the signalled thread' "$dir/rank-0.stacks"
  grep -q 'stopped: its dump handler cannot run' "$dir/rank-2.stacks"
  cmp "$dir/summary.txt" <(grep '^dist-train: watchdog: ' "$OUT/slurm-$JOB.out" | grep -v 'ending the step')
  [ "$(stat -c '%U %a' "$dir")" = "$DT_USER 700" ]
  no_node_drained
}

@test "watchdog-policy=requeue: requeued without the hung rank's node, resumed from the checkpoint" {
  # Run 0 on node[2-3] (node1 is the job's own exclusion); rank 1 on node3
  # is stopped; run 1 must add node3 to node1 and resume. node-loss=requeue
  # too: its rank 0 would say the requeue history as well, once is right.
  write_script job.sh <<EOS
#!/bin/bash
export DT_CHECKPOINT_DIR=$OUT/ckpt
echo "run \${SLURM_RESTART_COUNT:-0} on \$SLURM_JOB_NODELIST"
srun --dist-train=watchdog=10,watchdog-policy=requeue,node-loss=requeue $TRAIN 7 400 20 50
echo "srun exit \$?"
EOS
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" \
    -N2 --ntasks-per-node=1 --exclude=node1 --requeue --open-mode=append job.sh)
  local pid=""
  for _ in $(seq 300); do pid=$(pid_of_rank 1) && break; sleep 0.1; done
  [ -n "$pid" ]
  tr '\0' '\n' <"/proc/$pid/environ" | grep -qx 'SLURMD_NODENAME=node3'
  sleep 4 # past the checkpoint of step 50
  kill -STOP "$pid"
  state=$(wait_job "$JOB" 120) || true
  cat "$OUT/slurm-$JOB.out"
  [ "$state" = COMPLETED ]
  grep -qx 'run 0 on node\[2-3\]' "$OUT/slurm-$JOB.out"
  grep -q "^dist-train: watchdog: rank 1 on node3 (pid $pid) did not progress: stopped" "$OUT/slurm-$JOB.out"
  grep -qx "dist-train: watchdog: requeueing job $JOB (requeue 1 of 3) without node3" "$OUT/slurm-$JOB.out"
  grep -qx 'run 1 on node\[2,4\]' "$OUT/slurm-$JOB.out"
  run grep -Ecx "dist-train: (watchdog|node-loss): run 2 of job $JOB \(requeued 1 of at most 3 times\); its ExcNodeList is node\[1,3\]" "$OUT/slurm-$JOB.out"
  [ "$output" = 1 ]
  run grep -c 'run 2 of job' "$OUT/slurm-$JOB.out"
  [ "$output" = 1 ]
  # Run 0's dumps stay for the post-mortem; run 1 (steps numbered from 0
  # again) has a directory of its own, with live records and no hang.
  [ -s "$OUT/dist-train-watchdog-$JOB.0/summary.txt" ]
  [ -s "$OUT/dist-train-watchdog-$JOB.0/rank-1.stacks" ]
  [ -d "$OUT/dist-train-watchdog-$JOB.0.r1" ]
  [ ! -e "$OUT/dist-train-watchdog-$JOB.0.r1/summary.txt" ]
  requeued_once_and_resumed 'node[1,3]'
  same_weights_as_uninterrupted 400 -N2 --ntasks-per-node=1
  no_node_drained
}

@test "a job that keeps progressing is left alone" {
  write_script job.sh <<EOS
#!/bin/bash
srun --dist-train=watchdog=5 $TRAIN 7 150 50
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -q 'weights ' "$OUT/slurm-$JOB.out"
  run grep -c 'watchdog' "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
}

@test "bad watchdog values are refused at submit time, naming the value" {
  write_script job.sh <<'EOS'
#!/bin/bash
true
EOS
  cd "$OUT"
  run as_user sbatch --dist-train=watchdog=2 job.sh
  [ "$status" -ne 0 ]
  [[ $output == *"--dist-train: bad value '2' for 'watchdog'; valid values: a number of seconds from 5 to 86400 or off"* ]]
  run as_user sbatch --dist-train=watchdog job.sh
  [ "$status" -ne 0 ]
  [[ $output == *"--dist-train: 'watchdog' needs a value, e.g. watchdog=600"* ]]
}
