# Shared helpers for the end-to-end tests: real sbatch/srun on the local
# cluster (slurm-docker-cluster/local-cluster), jobs submitted by an
# unprivileged user.
# shellcheck shell=bash

DT_REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
DT_USER=${DT_TEST_USER:-dttest}

require_cluster() {
  [[ $(id -u) == 0 ]] ||
    skip "needs root to submit as the unprivileged user $DT_USER (CI runs as root)"
  if [[ -z ${SLURM_CONF:-} ]] || ! scontrol ping >/dev/null 2>&1; then
    skip "no local cluster is up (scripts/run-tests starts one)"
  fi
  id "$DT_USER" >/dev/null 2>&1 || skip "user $DT_USER does not exist"
}

# The release of the cluster's Slurm ("24.11"), and release_at_least X.Y:
# for expectations that differ between releases (never a silent skip).
slurm_release() { scontrol --version | sed -n 's/^slurm[-a-z]* \([0-9]*\)\.\([0-9]*\)\..*/\1.\2/p'; }
release_at_least() {
  local have
  have=$(slurm_release)
  [[ $(printf '%s\n%s\n' "$1" "$have" | sort -V | head -1) == "$1" ]]
}

# A fresh output folder the job user owns, with the task helpers in it.
make_outdir() {
  OUT=$(mktemp -d /tmp/dt-e2e.XXXXXX)
  cp "$DT_REPO"/tests/e2e/*.py "$OUT"/
  chown -R "$DT_USER" "$OUT"
  chmod 755 "$OUT"
}

# field FILE KEY: a top-level or environment value of a dump_task.py record.
field() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get(sys.argv[2], r["env"].get(sys.argv[2], "")))' "$1" "$2"
}

cleanup_outdir() {
  if [[ -n ${OUT:-} ]]; then rm -rf "$OUT"; fi
}

as_user() {
  runuser -u "$DT_USER" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@"
}

# write_script NAME <<'EOF' ... EOF: a job script in $OUT, owned by the user.
write_script() {
  cat >"$OUT/$1"
  chown "$DT_USER" "$OUT/$1"
}

# Waits (polling every 0.1 s, at most $2 s) until job $1 has ended; prints
# its final state and sets JOB_EXIT to the job's exit code.
wait_job() {
  local job=$1 deadline=$((SECONDS + ${2:-120})) info state
  while ((SECONDS < deadline)); do
    info=$(scontrol -o show job "$job" 2>/dev/null) || true
    state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
        JOB_EXIT=$(sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' <<<"$info")
        echo "$state"
        return 0
        ;;
    esac
    sleep 0.1
  done
  echo "TIMEOUT_WAITING"
  scontrol show job "$job" >&2 || true
  return 1
}

# run_job [sbatch args...] SCRIPT: submits as the user from $OUT, waits,
# sets JOB (id), JOB_STATE, JOB_EXIT and prints the job's output on failure.
run_job() {
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" "$@")
  JOB=${JOB%%;*}
  JOB_STATE=$(wait_job "$JOB")
  if [[ $JOB_STATE != COMPLETED ]]; then
    echo "job $JOB ended $JOB_STATE (exit $JOB_EXIT):" >&2
    cat "$OUT/slurm-$JOB.out" >&2 || true
  fi
}

no_node_drained() {
  local bad
  bad=$(sinfo -h -N -o '%N %T' | grep -Ev ' (idle|mixed|allocated|completing)$' || true)
  [[ -z $bad ]] || { echo "nodes not healthy: $bad" >&2; return 1; }
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

# requeued_once_and_resumed EXCLUDED: job $JOB was requeued once, its
# second run resumed from a checkpoint, and its ExcNodeList is EXCLUDED
# (as scontrol prints it, e.g. node[1,3]).
requeued_once_and_resumed() {
  local info
  grep -q '^resumed from the checkpoint of step [1-9][0-9]*$' "$OUT/slurm-$JOB.out"
  info=$(scontrol -o show job "$JOB")
  [[ $info == *"Restarts=1 "* ]]
  [[ $info == *"ExcNodeList=$1 "* ]]
}

# same_weights_as_uninterrupted STEPS [sbatch args...]: job $JOB's final
# weights (train_linear seed 7, STEPS steps, resumed after a requeue) are
# bit for bit those of a run of the same steps never interrupted, on the
# same shape. Submits that run (JOB changes to it).
same_weights_as_uninterrupted() {
  local steps=$1 resumed
  shift
  resumed=$(grep '^weights-hex ' "$OUT/slurm-$JOB.out")
  write_script plain.sh <<EOS
#!/bin/bash
srun --dist-train $DT_REPO/build/examples/train_linear 7 $steps 0
EOS
  run_job "$@" plain.sh
  [ "$JOB_STATE" = COMPLETED ]
  [ -n "$resumed" ]
  [ "$resumed" = "$(grep '^weights-hex ' "$OUT/slurm-$JOB.out")" ]
}
