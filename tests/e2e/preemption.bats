#!/usr/bin/env bats
# Requeue without scontrol: dt-requeue (the runtime's RequeueJob, libslurm)
# from inside a running batch job, as the unprivileged user.

load common

setup() {
  require_cluster
  make_outdir
  RQ="$DT_REPO/build/tools/dt-requeue"
  as_user test -x "$RQ" || skip "$DT_USER cannot run $RQ"
}

teardown() {
  if [[ -n ${JOB:-} ]]; then scancel "$JOB" 2>/dev/null || true; fi
  cleanup_outdir
}

@test "dt-requeue requeues the running job through libslurm, and refuses past --max" {
  write_script job.sh <<EOS
#!/bin/bash
#SBATCH --requeue
if [ "\${SLURM_RESTART_COUNT:-0}" = 0 ]; then
  $RQ --max 0 2>> refused.txt; echo "refused rc=\$?" >> log.txt
  $RQ --max 2; echo "requeue rc=\$?" >> log.txt
  sleep 60
fi
EOS
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" job.sh)
  for _ in $(seq 300); do
    grep -q "requeue rc=" "$OUT/log.txt" 2>/dev/null && break
    sleep 0.1
  done
  cat "$OUT/log.txt"
  grep -qx "refused rc=1" "$OUT/log.txt"
  grep -qx "dt-requeue: job $JOB was already requeued 0 times (limit 0)" "$OUT/refused.txt"
  grep -qx "requeue rc=0" "$OUT/log.txt"
  for _ in $(seq 100); do
    info=$(scontrol -o show job "$JOB")
    [[ $info == *"Restarts=1"* ]] && break
    sleep 0.1
  done
  [[ $info == *"Restarts=1"* ]]
  [[ $info == *"JobState=PENDING"* || $info == *"JobState=REQUEUED"* || $info == *"JobState=COMPLETING"* ]]
}

@test "time-limit warning: all ranks checkpoint the same step, the job requeues itself, resumes there and ends with an uninterrupted run's weights, bit for bit" {
  TRAIN="$DT_REPO/build/examples/train_linear"
  write_script train.sh <<EOS
#!/bin/bash
export DT_CHECKPOINT_DIR=$OUT/ckpt-\$SLURM_JOB_NAME DT_MAX_REQUEUES=1
echo "run \${SLURM_RESTART_COUNT:-0} start" >> $OUT/runs.\$SLURM_JOB_NAME
srun $TRAIN 7 200 \${STEP_MS:-0}
echo "run \${SLURM_RESTART_COUNT:-0} srun rc=\$?" >> $OUT/runs.\$SLURM_JOB_NAME
EOS
  # the reference: same ranks and nodes, never interrupted
  run_job --dist-train -J ref -N2 --ntasks-per-node=2 train.sh
  [ "$JOB_STATE" = COMPLETED ]
  ref=$(grep -o 'weights-hex .*' "$OUT/slurm-$JOB.out")
  [ -n "$ref" ]
  # 200 steps x 200 ms outlast the warning, which slurmctld sends 0-30 s
  # after the start (it checks every 30 s); a resumed run fits in the minute.
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" --export=ALL,STEP_MS=200 \
    -o "$OUT/cycle.out" --open-mode=append --dist-train --requeue -J cycle \
    -N2 --ntasks-per-node=2 --time=1 --signal=USR1@60 train.sh)
  state=$(wait_job "$JOB" 200)
  cat "$OUT/cycle.out" "$OUT/runs.cycle"
  [ "$state" = COMPLETED ]
  [[ $(scontrol -o show job "$JOB") == *"Restarts=1"* ]]
  saved=$(sed -n 's/^preemption warning: checkpoint of step \([0-9]*\) saved$/\1/p' "$OUT/cycle.out" | head -1)
  [ -n "$saved" ]
  grep -qx "resumed from the checkpoint of step $saved" "$OUT/cycle.out"
  for r in 0 1 2 3; do [ -s "$OUT/ckpt-cycle/step-$saved/rank-$r.ckpt" ]; done
  grep -qx "run 0 start" "$OUT/runs.cycle"
  grep -qx "run 1 srun rc=0" "$OUT/runs.cycle"
  [ "$(grep -o 'weights-hex .*' "$OUT/cycle.out")" = "$ref" ]
  JOB=
}

# pid_of_rank R: the pid of the test user's train_linear with RANK=R.
pid_of_rank() {
  local pid
  for pid in $(pgrep -u "$DT_USER" -x train_linear); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "RANK=$1"; then
      echo "$pid"
      return 0
    fi
  done
  return 1
}

@test "kill -9 of a rank in the middle of writing a checkpoint: the next run loads the previous complete one" {
  TRAIN="$DT_REPO/build/examples/train_linear"
  write_script train.sh <<EOS
#!/bin/bash
export DT_CHECKPOINT_DIR=$OUT/ckpt-\$SLURM_JOB_NAME
srun $TRAIN 7 200 \${STEP_MS:-0} 50
rc=\$?
echo "srun rc=\$rc"
exit \$rc
EOS
  run_job --dist-train -J ref -N2 --ntasks-per-node=2 train.sh
  [ "$JOB_STATE" = COMPLETED ]
  ref=$(grep -o 'weights-hex .*' "$OUT/slurm-$JOB.out")
  [ -n "$ref" ]
  # Checkpoints every 50 steps. Rank 2's temp file for step 100 is made a
  # FIFO nobody reads, so its checkpoint write blocks there, deterministically.
  step_dir="$OUT/ckpt-kill/step-100"
  as_user mkdir -p "$step_dir"
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" --export=ALL,STEP_MS=40 \
    -o "$OUT/kill.out" --dist-train -J kill -N2 --ntasks-per-node=2 train.sh)
  pid=""
  for _ in $(seq 100); do
    pid=$(pid_of_rank 2) && break
    sleep 0.05
  done
  [ -n "$pid" ]
  as_user mkfifo "$step_dir/.rank-2.ckpt.tmp.$pid"
  for _ in $(seq 300); do
    [ -e "$step_dir/rank-0.ckpt" ] && [ -e "$step_dir/rank-1.ckpt" ] &&
      [ -e "$step_dir/rank-3.ckpt" ] && break
    sleep 0.05
  done
  [ "$(cat "$OUT/ckpt-kill/LATEST")" = 50 ]
  [ ! -e "$step_dir/rank-2.ckpt" ]
  kill -0 "$pid"  # still there: blocked in the middle of its checkpoint
  kill -9 "$pid"
  state=$(wait_job "$JOB" 60)
  cat "$OUT/kill.out"
  [ "$state" = FAILED ]
  grep -q "rank 2" "$OUT/kill.out"
  [ "$(cat "$OUT/ckpt-kill/LATEST")" = 50 ]  # step 100 never marked
  # the next run resumes from step 50 and ends where an uninterrupted run does
  rm -f "$step_dir/.rank-2.ckpt.tmp.$pid"
  run_job --dist-train -J kill -N2 --ntasks-per-node=2 train.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -qx "resumed from the checkpoint of step 50" "$OUT/slurm-$JOB.out"
  [ "$(grep -o 'weights-hex .*' "$OUT/slurm-$JOB.out")" = "$ref" ]
  [ "$(cat "$OUT/ckpt-kill/LATEST")" = 150 ]
  JOB=
}
