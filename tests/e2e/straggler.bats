#!/usr/bin/env bats
# Stragglers and dt-status (docs/user-guide.md "Stragglers" and "Watching a
# job: dt-status") on the local cluster: a rank 20 % slower than the others
# is named with its host within 50 steps, dt-status shows the live table to
# the job's owner and to nobody else.

load common

setup() {
  require_cluster
  make_outdir
  TRAIN="$DT_REPO/build/examples/train_linear"
  STATUS="$DT_REPO/build/tools/dt-status"
}

teardown() {
  cleanup_outdir
}

# The first line of the job's log naming a straggler.
straggler_line() { grep -m1 '^dist-train: straggler: ' "$OUT/slurm-$JOB.out"; }

@test "a rank 20 % slower is named within 50 steps; dt-status shows it to its owner only" {
  write_script job.sh <<EOS
#!/bin/bash
TRAIN_LINEAR_SLOW=2:20 srun --dist-train=watchdog=60 $TRAIN 7 400 20
echo "srun exit \$?"
EOS
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" -N4 --ntasks-per-node=1 job.sh)
  local line=""
  for _ in $(seq 200); do line=$(straggler_line) && break; sleep 0.1; done
  echo "$line"
  run as_user "$STATUS" "$JOB"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"job $JOB, step 0: 4 ranks, watchdog 60 s ($OUT/dist-train-watchdog-$JOB.0)"* ]]
  echo "$output" | grep -Eq '^RANK +HOST +PID +STEPS +LAST PROGRESS +STEP ms +COMPUTE ms +FLAGS$'
  echo "$output" | grep -Eq '^   2  node3 .* straggler$'
  run grep -c ' straggler$' <<<"$output"
  [ "$output" = 1 ]
  as_user "$STATUS" --json "$JOB" >"$OUT/status.json"
  python3 - "$OUT/status.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ranks = {r["rank"]: r for r in j["ranks"]}
assert sorted(ranks) == [0, 1, 2, 3], ranks
assert [r for r in ranks if ranks[r]["straggler"]] == [2], ranks
assert ranks[2]["host"] == "node3" and ranks[2]["compute_ms"] > ranks[0]["compute_ms"], ranks
EOF
  # Another user: refused by slurmctld's owner, and by the directory itself.
  run runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$STATUS" "$JOB"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"dt-status: job $JOB belongs to uid $(id -u "$DT_USER"); dt-status shows a job to its owner only"* ]]
  run runuser -u nobody -- "$STATUS" --dir "$OUT" "$JOB"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"Permission denied"* ]]
  state=$(wait_job "$JOB" 120)
  cat "$OUT/slurm-$JOB.out"
  [ "$state" = COMPLETED ]
  grep -q '^srun exit 0' "$OUT/slurm-$JOB.out"
  [[ $line =~ ^dist-train:\ straggler:\ rank\ 2\ on\ node3\ \(pid\ [0-9]+\):\ [0-9.]+\ ms\ of\ compute\ per\ step,\ ([0-9]+)\ %\ over\ the\ other\ ranks\'\ median\ of\ [0-9.]+\ ms,\ 3\ windows\ in\ a\ row\ \(at\ step\ ([0-9]+)\)$ ]]
  pct=${BASH_REMATCH[1]} step=${BASH_REMATCH[2]}
  echo "named at step $step, $pct % over"
  [ "$step" -le 50 ]
  [ "$pct" -ge 10 ] && [ "$pct" -le 40 ]
  # Nobody else was named.
  run grep -c '^dist-train: straggler: rank [013] ' "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
  # After the job: every rank's record says it ended.
  run as_user "$STATUS" "$JOB"
  [ "$(grep -c ' ended$' <<<"$output")" -ge 3 ]
}

@test "an unchanged torch DDP script with one added line: the slow rank is named" {
  /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ||
    skip "Debian's python3-torch is not installed"
  write_script job.sh <<EOS
#!/bin/bash
export PYTHONPATH=$DT_REPO/python
export USE_LIBUV=0 # Debian 13+'s torch has no libuv (docs/user-guide.md)
srun --dist-train=watchdog=60 /usr/bin/python3 $DT_REPO/tests/e2e/ddp_straggler.py 150 20 1 25
echo "srun exit \$?"
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -q '^srun exit 0' "$OUT/slurm-$JOB.out"
  line=$(straggler_line)
  [[ $line =~ ^dist-train:\ straggler:\ rank\ 1\ on\ node2\ .*\(at\ step\ ([0-9]+)\)$ ]]
  echo "named at step ${BASH_REMATCH[1]}"
  [ "${BASH_REMATCH[1]}" -le 50 ]
  run grep -c '^dist-train: straggler: rank 0 ' "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
}

@test "ranks at the same speed are never named" {
  write_script job.sh <<EOS
#!/bin/bash
srun --dist-train=watchdog=60 $TRAIN 7 300 20
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  run grep -c 'straggler' "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
}

@test "dt-status shows the step's preflight report" {
  write_script job.sh <<EOS
#!/bin/bash
srun --dist-train=preflight=20,watchdog=60 $TRAIN 7 100 20
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  run as_user "$STATUS" "$JOB"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"dist-train: preflight: passed: 2 nodes, "* ]]
  diff <(grep '^dist-train: preflight: ' <<<"$output") \
    <(grep '^dist-train: preflight: ' "$OUT/slurm-$JOB.out")
}

@test "dt-status names what is missing" {
  run as_user "$STATUS" --dir "$OUT" 999999
  [ "$status" -eq 1 ]
  [[ $output == *"no dist-train-watchdog-999999.* in $OUT"* ]]
  run as_user "$STATUS" 999999
  [ "$status" -eq 1 ]
  [[ $output == *"dt-status: "*"999999"* ]]
  run as_user "$STATUS" not-a-job
  [ "$status" -eq 1 ]
  [[ $output == *"'not-a-job' is not a job id"* ]]
}
