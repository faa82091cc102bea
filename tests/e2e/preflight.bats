#!/usr/bin/env bats
# The preflight gate (--dist-train=preflight, docs/user-guide.md
# "Preflight") on the local cluster: a clean cluster passes and training
# follows on the same MASTER_PORT; a node throttled by a CPU cgroup quota
# is named, policy fail ends the step before the program starts, and
# policy requeue requeues the job without it (within DT_MAX_REQUEUES).

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

@test "policy requeue: the job is requeued without the throttled node, keeps its own exclusion, and completes" {
  need_cpu_cgroup_v1
  throttle node3
  # --exclude=node1: the first run lands on node[2-3] (the scheduler takes
  # the lowest free nodes), the requeued one must add node3 to node1.
  write_script job.sh <<'EOS'
#!/bin/bash
echo "run ${SLURM_RESTART_COUNT:-0} on $SLURM_JOB_NODELIST"
srun --dist-train=preflight=30,preflight-policy=requeue echo "TRAINING-RAN on $SLURM_JOB_NODELIST"
echo "run ${SLURM_RESTART_COUNT:-0}: srun exit $?"
EOS
  run_job -N2 --ntasks-per-node=1 --exclude=node1 --requeue --open-mode=append job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -qx 'run 0 on node\[2-3\]' "$OUT/slurm-$JOB.out"
  grep -q '^  node3: slow: CPU ' "$OUT/slurm-$JOB.out"
  grep -q '^dist-train: preflight: took [0-9.]* s, policy requeue: the step ends before the program starts, and the job is requeued without the bad nodes$' "$OUT/slurm-$JOB.out"
  # Said before the requeue; what task 0 says after it may be cut with the step.
  grep -qx "dist-train: preflight: requeueing job $JOB (requeue 1 of 3) without node3" "$OUT/slurm-$JOB.out"
  grep -qx 'run 1 on node\[2,4\]' "$OUT/slurm-$JOB.out"
  grep -qx "dist-train: preflight: run 2 of job $JOB (requeued 1 of at most 3 times); its ExcNodeList is node\[1,3\]" "$OUT/slurm-$JOB.out"
  grep -q '^dist-train: preflight: passed: 2 nodes, ' "$OUT/slurm-$JOB.out"
  [ "$(grep -c '^TRAINING-RAN on node\[2,4\]$' "$OUT/slurm-$JOB.out")" = 2 ]
  run grep -c 'TRAINING-RAN on node\[2-3\]' "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
  info=$(scontrol -o show job "$JOB")
  [[ $info == *"Restarts=1 "* ]]
  [[ $info == *"ExcNodeList=node[1,3] "* ]]
  no_node_drained
}

@test "policy requeue stops at DT_MAX_REQUEUES and ends the step" {
  need_cpu_cgroup_v1
  throttle node3
  write_script job.sh <<'EOS'
#!/bin/bash
export DT_MAX_REQUEUES=0
srun --dist-train=preflight=30,preflight-policy=requeue echo NEVER-RAN
echo "srun exit $?"
EOS
  run_job -N4 --ntasks-per-node=1 --requeue job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -qx "dist-train: preflight: not requeued: job $JOB was requeued 0 times (limit 0, DT_MAX_REQUEUES)" "$OUT/slurm-$JOB.out"
  grep -q '^dist-train: error: preflight failed (see its report above); preflight-policy=requeue: the program was not started$' "$OUT/slurm-$JOB.out"
  grep -q '^srun exit [1-9]' "$OUT/slurm-$JOB.out"
  run grep -q NEVER-RAN "$OUT/slurm-$JOB.out"
  [ "$status" -ne 0 ]
  [[ $(scontrol -o show job "$JOB") == *"Restarts=0 "* ]]
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
  run as_user sbatch --dist-train=preflight-policy=retry job.sh
  [ "$status" -ne 0 ]
  [[ $output == *"--dist-train: bad value 'retry' for 'preflight-policy'; valid values: warn, fail or requeue"* ]]
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
