#!/usr/bin/env bats
# The preflight gate (--dist-train=preflight, docs/user-guide.md
# "Preflight") on the local cluster: a clean cluster passes and training
# follows on the same MASTER_PORT; a node throttled by a CPU cgroup quota
# is named, and policy fail ends the step before the program starts.

load common

setup() {
  require_cluster
  grep -q 'preflight_program=' "$DT_CLUSTER_DIR/plugstack.conf" ||
    { echo "the cluster's plugstack.conf names no preflight_program (build tools/ first)" >&2; return 1; }
  make_outdir
  TRAIN="$DT_REPO/build/examples/train_linear"
}

teardown() {
  unthrottle
  cleanup_outdir
}

# throttle NODE: that node's slurmd (and so every step it starts) gets 5 %
# of one CPU, through a cgroup v1 cpu quota.
SLOW=/sys/fs/cgroup/cpu/dt-preflight-slow
throttle() {
  local pid
  pid=$(awk -v n="slurmd-$1" '$1 == n { print $2 }' "$DT_CLUSTER_DIR/daemons.pids")
  [[ -n $pid ]] || { echo "no slurmd-$1 in $DT_CLUSTER_DIR/daemons.pids" >&2; return 1; }
  mkdir -p "$SLOW"
  echo 100000 >"$SLOW/cpu.cfs_period_us"
  echo 5000 >"$SLOW/cpu.cfs_quota_us"
  echo "$pid" >"$SLOW/cgroup.procs"
}
unthrottle() {
  [[ -d $SLOW ]] || return 0
  local pid
  while read -r pid; do echo "$pid" >/sys/fs/cgroup/cpu/cgroup.procs; done <"$SLOW/cgroup.procs"
  rmdir "$SLOW"
}
need_cpu_cgroup_v1() {
  [[ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]] ||
    skip "throttling a node needs the cgroup v1 cpu controller (/sys/fs/cgroup/cpu)"
}

@test "a clean cluster passes preflight ${DT_PREFLIGHT_RUNS:-5} times in a row, then trains on the same port" {
  write_script job.sh <<EOS
#!/bin/bash
#SBATCH --dist-train=preflight=30,preflight-policy=fail
for i in \$(seq ${DT_PREFLIGHT_RUNS:-5}); do srun true || exit 1; done
srun $TRAIN 11
EOS
  run_job -N4 --ntasks-per-node=2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  [ "$(grep -c '^dist-train: preflight: passed: 4 nodes, median CPU ' "$OUT/slurm-$JOB.out")" = $((${DT_PREFLIGHT_RUNS:-5} + 1)) ]
  grep -q '^dist-train: preflight: network: 8 ranks (' "$OUT/slurm-$JOB.out"
  grep -q '^dist-train: preflight: no GPU on any node: GPU checks skipped' "$OUT/slurm-$JOB.out"
  grep -q 'weights ' "$OUT/slurm-$JOB.out"
  run grep -c 'bad or slow' "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
}

@test "a throttled node is named; policy fail ends the step before the program, warn starts it" {
  need_cpu_cgroup_v1
  throttle node3
  write_script job.sh <<'EOS'
#!/bin/bash
srun --dist-train=preflight=30,preflight-policy=warn echo TRAINING-RAN
echo "warn: srun exit $?"
srun --dist-train=preflight=30,preflight-policy=fail echo FAIL-POLICY-RAN
echo "fail: srun exit $?"
EOS
  run_job -N4 --ntasks-per-node=1 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  [ "$(grep -c '^dist-train: preflight: 1 of 4 nodes is bad or slow:$' "$OUT/slurm-$JOB.out")" = 2 ]
  [ "$(grep -c '^  node3: slow: CPU [0-9.]* GFLOP/s, [0-9]*% of the median ' "$OUT/slurm-$JOB.out")" = 2 ]
  run grep -E '^  node[124]:' "$OUT/slurm-$JOB.out"
  [ "$status" -ne 0 ]
  [ "$(grep -c '^TRAINING-RAN$' "$OUT/slurm-$JOB.out")" = 4 ]
  grep -q '^warn: srun exit 0$' "$OUT/slurm-$JOB.out"
  run grep -q 'FAIL-POLICY-RAN' "$OUT/slurm-$JOB.out"
  [ "$status" -ne 0 ]
  grep -q '^dist-train: error: preflight failed (see its report above); preflight-policy=fail: the program was not started$' "$OUT/slurm-$JOB.out"
  grep -q '^fail: srun exit [1-9]' "$OUT/slurm-$JOB.out"
  no_node_drained
}

@test "bad preflight words are refused at submit time, naming the value" {
  write_script job.sh <<'EOS'
#!/bin/bash
true
EOS
  cd "$OUT"
  run as_user sbatch --dist-train=preflight=4 job.sh
  [ "$status" -ne 0 ]
  [[ $output == *"--dist-train: bad value '4' for 'preflight'; valid values: a number of seconds from 5 to 3600 or off"* ]]
  run as_user sbatch --dist-train=preflight-policy=requeue job.sh
  [ "$status" -ne 0 ]
  [[ $output == *"--dist-train: bad value 'requeue' for 'preflight-policy'; valid values: warn or fail"* ]]
  run as_user sbatch --dist-train=preflight= job.sh
  [ "$status" -ne 0 ]
  [[ $output == *"bad value '' for 'preflight'"* ]]
}

@test "dt-wire --preflight runs the same gate without the plugin's option" {
  write_script job.sh <<EOS
#!/bin/bash
eval "\$($DT_REPO/build/tools/dt-wire --job-env)"
srun $DT_REPO/build/tools/dt-wire --preflight=20 -- echo WIRED-RAN
srun $DT_REPO/build/tools/dt-wire --preflight=2 -- echo NEVER
echo "bad: srun exit \$?"
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -q '^dist-train: preflight: passed: 2 nodes, ' "$OUT/slurm-$JOB.out"
  [ "$(grep -c '^WIRED-RAN$' "$OUT/slurm-$JOB.out")" = 2 ]
  grep -q "^dt-wire: --preflight: '2' is not a number of seconds from 5 to 3600 or off$" "$OUT/slurm-$JOB.out"
  grep -q '^bad: srun exit 2$' "$OUT/slurm-$JOB.out"
  run grep -q NEVER "$OUT/slurm-$JOB.out"
  [ "$status" -ne 0 ]
}
