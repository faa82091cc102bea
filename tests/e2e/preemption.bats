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
  $RQ --max 2 2>> failed.txt; echo "requeue rc=\$?" >> log.txt
  sleep 60
fi
EOS
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" job.sh)
  # A successful requeue kills this batch script, often before its echo
  # after dt-requeue runs: the job's restart count is the proof, and a
  # "requeue rc=" line, when the script lived to write one, must say 0.
  for _ in $(seq 300); do
    info=$(scontrol -o show job "$JOB")
    [[ $info == *"Restarts=1"* ]] && break
    grep -q "requeue rc=" "$OUT/log.txt" 2>/dev/null && ! grep -qx "requeue rc=0" "$OUT/log.txt" && break
    sleep 0.1
  done
  cat "$OUT/log.txt" "$OUT/failed.txt" 2>/dev/null || true
  grep -qx "refused rc=1" "$OUT/log.txt"
  grep -qx "dt-requeue: job $JOB was already requeued 0 times (limit 0)" "$OUT/refused.txt"
  [ -z "$(grep "requeue rc=" "$OUT/log.txt" | grep -vx "requeue rc=0")" ]
  [ ! -s "$OUT/failed.txt" ]
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
  # slurmctld checks time limits every 30 s and sends the warning, to steps
  # only, at the first check where end - now <= 20 + 30 s: 10-40 s after
  # the start. Sent earlier, it could come before srun made the step and
  # reach nobody (Slurm marks it sent anyway). 200 steps x 250 ms outlast
  # it; a resumed run (warned again, no requeue left) fits in the minute.
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" --export=ALL,STEP_MS=250 \
    -o "$OUT/cycle.out" --open-mode=append --dist-train --requeue -J cycle \
    -N2 --ntasks-per-node=2 --time=1 --signal=USR1@20 train.sh)
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


@test "a rank killed in the middle of writing a checkpoint: the next run loads the previous complete one" {
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
  # Checkpoints every 50 steps. Once step 50 is marked, rank 2 gets a file
  # size limit of 8 bytes: its write of step 100 stops after 8 bytes with
  # SIGXFSZ, which kills it there, after the others wrote theirs. (Temp
  # names are random and opened O_EXCL|O_NOFOLLOW|O_NONBLOCK, so a planted
  # FIFO no longer blocks it: issue #12.)
  step_dir="$OUT/ckpt-kill/step-100"
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" --export=ALL,STEP_MS=40 \
    -o "$OUT/kill.out" --dist-train -J kill -N2 --ntasks-per-node=2 train.sh)
  for _ in $(seq 600); do
    [ "$(cat "$OUT/ckpt-kill/LATEST" 2>/dev/null)" = 50 ] && break
    sleep 0.02
  done
  [ "$(cat "$OUT/ckpt-kill/LATEST")" = 50 ]
  pid=$(pid_of_rank 2)
  as_user prlimit --pid "$pid" --fsize=8:
  for _ in $(seq 300); do
    [ -e "$step_dir/rank-0.ckpt" ] && [ -e "$step_dir/rank-1.ckpt" ] &&
      [ -e "$step_dir/rank-3.ckpt" ] && break
    sleep 0.05
  done
  [ -e "$step_dir/rank-3.ckpt" ]
  [ ! -e "$step_dir/rank-2.ckpt" ]
  state=$(wait_job "$JOB" 60)
  cat "$OUT/kill.out"
  [ "$state" = FAILED ]
  grep -q "rank 2" "$OUT/kill.out"
  [ "$(cat "$OUT/ckpt-kill/LATEST")" = 50 ]  # step 100 never marked
  # the next run resumes from step 50 and ends where an uninterrupted run does
  run_job --dist-train -J kill -N2 --ntasks-per-node=2 train.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -qx "resumed from the checkpoint of step 50" "$OUT/slurm-$JOB.out"
  [ "$(grep -o 'weights-hex .*' "$OUT/slurm-$JOB.out")" = "$ref" ]
  [ "$(cat "$OUT/ckpt-kill/LATEST")" = 150 ]
  JOB=
}
