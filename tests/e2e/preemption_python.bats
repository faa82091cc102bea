#!/usr/bin/env bats
# The whole preemption cycle from Python: examples/train_ddp_preempt.py
# (PyTorch DDP over Gloo, the dist_train package from the checkout) is
# warned mid-epoch, all ranks save the same step, rank 0 requeues the job,
# the requeued job resumes there and ends with the weights of a run that was
# never interrupted, bit for bit. In task mode (srun) and in node mode with
# dt-run as the launcher. scripts/run-tests runs this file again on 2-node
# clusters with proctrack/pgid and linuxproc (DT_PROCTRACK tells which) on
# the host's release: the cycle is the same under all three.
#
# The warning is sent with `scancel --signal=USR1` once the run reached a
# chosen point: like Slurm's --signal it goes to the steps only, and it
# comes when the test needs it instead of 10-40 s into the job (the
# time-limit path is tested with the C++ trainer in preemption.bats).

load common

EXAMPLE_ARGS="7 4"  # seed, epochs: 4 epochs of 15 steps with 4 ranks
STEPS_PER_EPOCH=15

setup_file() {
  require_cluster
  /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ||
    skip "Debian's python3-torch is not installed"
  # One uninterrupted reference for every test: same ranks, same nodes.
  make_outdir
  write_job srun
  run_job --dist-train -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  REF_WEIGHTS=$(grep -o 'weights-hex .*' "$OUT/slurm-$JOB.out")
  [ -n "$REF_WEIGHTS" ]
  [ ! -e "$OUT/ckpt/LATEST" ]  # never warned: nothing saved
  export REF_WEIGHTS
  cleanup_outdir
}

setup() {
  require_cluster
  make_outdir
  DTRUN="$DT_REPO/build/tools/dt-run"
}

teardown() {
  if [[ -n ${JOB:-} ]]; then scancel "$JOB" 2>/dev/null || true; fi
  cleanup_outdir
}

# write_job LAUNCH...: job.sh runs `LAUNCH python3 train_ddp_preempt.py`
# with checkpoints in $OUT/ckpt (DT_MAX_REQUEUES from MAX_REQUEUES, else 1)
# and logs each run's start and srun's exit code to $OUT/runs. Only the
# first run sleeps STEP_MS per step (to be warned mid-epoch); a requeued
# one runs at full speed.
write_job() {
  write_script job.sh <<EOS
#!/bin/bash
export PYTHONPATH=$DT_REPO/python DT_CHECKPOINT_DIR=$OUT/ckpt
export DT_MAX_REQUEUES=\${MAX_REQUEUES:-1}
echo "run \${SLURM_RESTART_COUNT:-0} start" >> $OUT/runs
step_ms=\${STEP_MS:-0}
[ "\${SLURM_RESTART_COUNT:-0}" = 0 ] || step_ms=0
$* /usr/bin/python3 $DT_REPO/examples/train_ddp_preempt.py $EXAMPLE_ARGS \$step_ms
echo "run \${SLURM_RESTART_COUNT:-0} srun rc=\$?" >> $OUT/runs
EOS
}

# submit ENV ARGS...: submits job.sh in the background (JOB) with ENV
# (e.g. STEP_MS=100) exported, output appended to $OUT/out.txt.
submit() {
  local env=$1
  shift
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" --export="ALL,$env" \
    -o "$OUT/out.txt" --open-mode=append --requeue "$@" job.sh)
}

# warn_when PATTERN: once the job's output shows PATTERN, sends it the
# warning (to its steps, as Slurm's --signal does).
warn_when() {
  for _ in $(seq 600); do
    grep -q "$1" "$OUT/out.txt" 2>/dev/null && break
    sleep 0.1
  done
  grep -q "$1" "$OUT/out.txt" || { cat "$OUT/out.txt"; return 1; }
  scancel --signal=USR1 "$JOB"
}

# poke_requeued: once the requeued job may start again (Slurm holds it for
# AuthInfo's cred_expire seconds), makes slurmctld schedule it now instead
# of at its next periodic pass (backfill: up to 30 s later), as any update
# of a job does.
poke_requeued() {
  local info eligible
  for _ in $(seq 300); do
    info=$(scontrol -o show job "$JOB")
    [[ $info == *"Restarts=1"* && $info == *"JobState=PENDING"* ]] && break
    sleep 0.1
  done
  eligible=$(date -d "$(sed -n 's/.* EligibleTime=\([^ ]*\).*/\1/p' <<<"$info")" +%s) || return 0
  while (($(date +%s) <= eligible)); do sleep 0.2; done
  scontrol update JobId="$JOB" Comment=requeued
}

# saved_step: the step of the (only) checkpoint a warning made.
saved_step() {
  sed -n 's/^\(\[0\] \)\{0,1\}preemption warning: checkpoint of step \([0-9]*\) saved$/\2/p' "$OUT/out.txt"
}

# check_saved STEP: every rank's file of STEP exists and LATEST names it or
# a later step.
check_saved() {
  for r in 0 1 2 3; do [ -s "$OUT/ckpt/step-$1/rank-$r.bin" ]; done
  (($(cat "$OUT/ckpt/LATEST") >= $1))
}

# check_cycle STATE: the job ended COMPLETED after one requeue; the warned
# run saved one step in the middle of an epoch, the requeued run resumed
# from exactly there and ended with the reference's weights.
check_cycle() {
  local saved epoch batch
  cat "$OUT/runs" "$OUT/out.txt"  # runs first: short, and says the most
  [ "$1" = COMPLETED ]
  [[ $(scontrol -o show job "$JOB") == *"Restarts=1"* ]]
  saved=$(saved_step)
  [ "$(wc -l <<<"$saved")" -eq 1 ] && [ -n "$saved" ]
  epoch=$((saved / STEPS_PER_EPOCH)) batch=$((saved % STEPS_PER_EPOCH))
  ((batch > 0))  # mid-epoch: the sampler's position matters
  grep -Eqx "(\[0\] )?resumed from the checkpoint of step $saved \(epoch $epoch, batch $batch\)" "$OUT/out.txt"
  # Rank 0's "job requeued; stopping (exit 75)" is not required: Slurm ends
  # the job as soon as the requeue is granted, and the line may still be on
  # its way (through dt-run and srun) then. Restarts=1 says the requeue
  # happened, and only the example requeues.
  check_saved "$saved"
  grep -qx "run 0 start" "$OUT/runs"
  grep -qx "run 1 srun rc=0" "$OUT/runs"
  [ "$(grep -o 'weights-hex .*' "$OUT/out.txt")" = "$REF_WEIGHTS" ]
  JOB=
}

@test "task mode: warned mid-epoch, all ranks save the same step, the job requeues itself, resumes there (sampler position, RNG states) and ends with an uninterrupted run's weights, bit for bit" {
  write_job srun
  submit STEP_MS=100 --dist-train -N2 --ntasks-per-node=2
  warn_when "epoch 1 batch  0 "
  poke_requeued
  check_cycle "$(wait_job "$JOB" 100)"
}

@test "node mode with dt-run: dt-run survives the warning, its workers go through the same cycle and end with the reference's weights" {
  write_job srun --ntasks-per-node=1 "$DTRUN"
  submit STEP_MS=100 --dist-train=mode=node,nproc=2 -N2 --ntasks-per-node=1
  warn_when "epoch 1 batch  0 "
  poke_requeued
  check_cycle "$(wait_job "$JOB" 100)"
  # dt-run caught it and left the delivery to the relay. Both dt-runs get
  # it, but a loaded node's may not have said so yet when the requeue ends
  # the step (the workers need only one rank's request to stop together).
  n=$(grep -cx "dt-run: preemption warning (User defined signal 1); the plugin's relay delivers it to workers" "$OUT/out.txt")
  ((n >= 1 && n <= 2))
}

# catching_workers: how many of the user's python3 processes catch USR1.
catching_workers() {
  local pid n=0 caught
  for pid in $(pgrep -u "$DT_USER" -x python3); do
    caught=$(sed -n 's/^SigCgt:\t//p' "/proc/$pid/status" 2>/dev/null) || continue
    [[ -n $caught ]] && (((0x$caught >> 9) & 1)) && n=$((n + 1))
  done
  echo "$n"
}

@test "a warning while the workers still import torch is kept (the handler is installed first): they save step 1; with no requeue left they train on to the reference's weights" {
  write_job srun
  submit MAX_REQUEUES=0 --dist-train -N2 --ntasks-per-node=2
  for _ in $(seq 300); do
    (($(catching_workers) == 4)) && break
    sleep 0.05
  done
  (($(catching_workers) == 4))
  scancel --signal=USR1 "$JOB"
  state=$(wait_job "$JOB" 60)
  cat "$OUT/out.txt" "$OUT/runs"
  [ "$state" = COMPLETED ]
  [[ $(scontrol -o show job "$JOB") == *"Restarts=0"* ]]
  # no step ran before the warning: the first agreement stops after step 1
  [ "$(saved_step)" = 1 ]
  grep -qx "no requeue (the job may not be requeued again): training on" "$OUT/out.txt"
  check_saved 1
  grep -qx "run 0 srun rc=0" "$OUT/runs"
  [ "$(grep -o 'weights-hex .*' "$OUT/out.txt")" = "$REF_WEIGHTS" ]
  JOB=
}
