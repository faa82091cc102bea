#!/usr/bin/env bats
# Lost nodes (--dist-train=node-loss=requeue, docs/user-guide.md "Lost
# nodes") on the local cluster: node2's network is cut in the middle of
# training (its link on the cluster's bridge set down: no FIN, no RST, no
# reply at all, as when a node loses power). Rank 0 names node2, requeues
# the job without it, and the job resumes from its checkpoint on the other
# nodes with the weights of a run never interrupted. Needs the cluster's
# netns mode (every node has a link of its own).

load common

LINK=dtv-node2

setup() {
  require_cluster
  ip link show "$LINK" >/dev/null 2>&1 ||
    skip "cutting a node's network needs the cluster's netns mode (no link $LINK)"
  make_outdir
  TRAIN="$DT_REPO/build/examples/train_linear"
}

teardown() {
  reconnect_node2
  cleanup_outdir
}

# Brings node2's link back and waits (at most 60 s) until Slurm has it
# idle again (ReturnToService=2; a resume when it stays down).
reconnect_node2() {
  ip link set "$LINK" up 2>/dev/null || true
  local state
  for i in $(seq 120); do
    state=$(sinfo -h -n node2 -o '%T')
    [[ $state == idle ]] && return 0
    if ((i == 40)); then scontrol update nodename=node2 state=resume 2>/dev/null || true; fi
    sleep 0.5
  done
  echo "node2 is still $state" >&2
}

@test "node-loss=requeue: a node whose network is cut is excluded, the job resumes from its checkpoint" {
  write_script job.sh <<EOS
#!/bin/bash
export DT_CHECKPOINT_DIR=$OUT/ckpt
echo "run \${SLURM_RESTART_COUNT:-0} on \$SLURM_JOB_NODELIST"
srun --dist-train=node-loss=requeue $TRAIN 7 500 20 50
echo "srun exit \$?"
EOS
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" \
    -N3 --ntasks-per-node=1 --requeue --open-mode=append job.sh)
  local pid=""
  for _ in $(seq 300); do pid=$(pid_of_rank 1) && break; sleep 0.1; done
  [ -n "$pid" ]
  tr '\0' '\n' <"/proc/$pid/environ" | grep -qx 'SLURMD_NODENAME=node2'
  sleep 4 # past the checkpoint of step 50
  local cut=$SECONDS
  ip link set "$LINK" down
  for _ in $(seq 600); do
    grep -q '^dist-train: node-loss: requeueing' "$OUT/slurm-$JOB.out" && break
    sleep 0.1
  done
  echo "requeued $((SECONDS - cut)) s after the cut"
  state=$(wait_job "$JOB" 240) || true
  cat "$OUT/slurm-$JOB.out"
  [ "$state" = COMPLETED ]
  grep -qx 'run 0 on node\[1-3\]' "$OUT/slurm-$JOB.out"
  grep -q '^dist-train: rank 0: rank 1 (.*) stopped answering: its machine or its network is gone' "$OUT/slurm-$JOB.out"
  grep -qx 'dist-train: node-loss: node2 (rank 1) stopped answering rank 0 (no TCP reply for 10 s)' "$OUT/slurm-$JOB.out"
  grep -qx "dist-train: node-loss: requeueing job $JOB (requeue 1 of 3) without node2" "$OUT/slurm-$JOB.out"
  grep -qx 'run 1 on node\[1,3-4\]' "$OUT/slurm-$JOB.out"
  grep -qx "dist-train: node-loss: run 2 of job $JOB (requeued 1 of at most 3 times); its ExcNodeList is node2" "$OUT/slurm-$JOB.out"
  requeued_once_and_resumed 'node2'
  reconnect_node2
  same_weights_as_uninterrupted 500 -N3 --ntasks-per-node=1
}

@test "a rank that dies on a live node is named and excludes nothing" {
  write_script job.sh <<EOS
#!/bin/bash
srun --dist-train=node-loss=requeue $TRAIN 7 2000 20
echo "srun exit \$?"
EOS
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" \
    -N3 --ntasks-per-node=1 --requeue job.sh)
  local pid=""
  for _ in $(seq 300); do pid=$(pid_of_rank 1) && break; sleep 0.1; done
  [ -n "$pid" ]
  sleep 2
  kill -KILL "$pid"
  state=$(wait_job "$JOB" 120) || true
  cat "$OUT/slurm-$JOB.out"
  [ "$state" = COMPLETED ] # the batch script goes on after srun
  grep -q '^dist-train: rank 0: rank 1 (.*) closed the connection' "$OUT/slurm-$JOB.out"
  run grep -c 'node-loss' "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
  info=$(scontrol -o show job "$JOB")
  [[ $info == *"Restarts=0 "* ]]
  [[ $info != *"ExcNodeList=node"* ]]
}

@test "bad node-loss values are refused at submit time, naming the value" {
  write_script job.sh <<'EOS'
#!/bin/bash
true
EOS
  cd "$OUT"
  run as_user sbatch --dist-train=node-loss=sometimes job.sh
  [ "$status" -ne 0 ]
  [[ $output == *"--dist-train: bad value 'sometimes' for 'node-loss'; valid values: fail or requeue"* ]]
}
