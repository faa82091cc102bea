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
