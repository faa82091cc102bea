#!/usr/bin/env bats
# Tasks that drive several GPUs, end to end: the local cluster has no GPUs,
# so the plugin is given the DGX H100 fixture as its topology (Slurm then
# manages no GPUs and every GPU of the fixture is the step's). bind=gpu+nic:
# the fixture's CPUs are not the container's. GPU i <-> the NICs
# mlx5_{0,3,4,5,6,9,10,11}[i] (docs/binding.md).
# (SLURM_GPUS_PER_TASK cannot be tried here: srun reads it as
# --gpus-per-task and the cluster has no GPU gres; the unit tests cover it.)

load common

setup() {
  require_cluster
  PLUGSTACK="${DT_CLUSTER_DIR:?}/plugstack.conf"
  cp "$PLUGSTACK" "$BATS_TEST_TMPDIR/plugstack.conf.orig"
  grep -q spank_dist_train.so "$PLUGSTACK" || skip "the cluster runs without the plugin"
  plugin=$(awk '/spank_dist_train.so/ {print $1, $2; exit}' "$PLUGSTACK")
  echo "$plugin topology=$DT_REPO/tests/fixtures/dgx-h100-8gpu.xml bind=gpu+nic" >"$PLUGSTACK"
  make_outdir
}

teardown() {
  if [[ -n ${PLUGSTACK:-} && -f $BATS_TEST_TMPDIR/plugstack.conf.orig ]]; then
    cp "$BATS_TEST_TMPDIR/plugstack.conf.orig" "$PLUGSTACK"
  fi
  cleanup_outdir
}

NICS=(mlx5_0 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_9 mlx5_10 mlx5_11)

# The bus ids of the fixture's GPUs FROM..TO, comma-separated, from dt-topo.
gpu_ids() {
  "$DT_REPO/build/tools/dt-topo" --topology "$DT_REPO/tests/fixtures/dgx-h100-8gpu.xml" --json |
    python3 -c 'import json,sys; p=json.load(sys.stdin); print(",".join(r["gpu"] for r in p[int(sys.argv[1]):int(sys.argv[2]) + 1]))' "$1" "$2"
}

@test "one task per node (a launcher) gets all 8 GPUs and all 8 NICs" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  for f in "$OUT/$JOB".0.*.json; do
    echo "$f: $(field "$f" CUDA_VISIBLE_DEVICES) $(field "$f" DT_NICS)"
    [ "$(field "$f" CUDA_VISIBLE_DEVICES)" = 0,1,2,3,4,5,6,7 ]
    [ "$(field "$f" DT_LOCAL_GPU)" = 0 ]
    [ "$(field "$f" DT_GPUS)" = "$(gpu_ids 0 7)" ]
    [ "$(field "$f" DT_NIC)" = mlx5_0 ]
    [ "$(field "$f" DT_NICS)" = "$(IFS=,; echo "${NICS[*]}")" ]
    [ "$(field "$f" UCX_NET_DEVICES)" = "$(printf '%s:1,' "${NICS[@]}" | sed 's/,$//')" ]
  done
  run grep -c "in no task's plan" "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
}

@test "4 tasks on 8 GPUs: two neighbouring GPUs and their two NICs each" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
EOS
  run_job -N1 --ntasks-per-node=4 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  for i in 0 1 2 3; do
    f="$OUT/$JOB.0.$i.json"
    a=$((2 * i)) b=$((2 * i + 1))
    echo "rank $i: $(field "$f" CUDA_VISIBLE_DEVICES) $(field "$f" DT_NICS)"
    [ "$(field "$f" CUDA_VISIBLE_DEVICES)" = "$a,$b" ]
    [ "$(field "$f" DT_LOCAL_GPU)" = 0 ]
    [ "$(field "$f" DT_GPUS)" = "$(gpu_ids $a $b)" ]
    [ "$(field "$f" DT_NIC)" = "${NICS[$a]}" ]
    [ "$(field "$f" DT_NICS)" = "${NICS[$a]},${NICS[$b]}" ]
    [ "$(field "$f" UCX_NET_DEVICES)" = "${NICS[$a]}:1,${NICS[$b]}:1" ]
  done
}

@test "3 tasks on 8 GPUs: GPUs 6-7 are named in one warning per node" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=3 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  cat "$OUT/slurm-$JOB.out"
  want="dist-train: binding: GPUs 6-7 are in no task's plan: 3 tasks on 8 GPUs get 2 each; use a task count that divides 8 (1, 2, 4 or 8)"
  [ "$(grep -cxF "$want" "$OUT/slurm-$JOB.out")" -eq 2 ]
  [ "$(field "$OUT/$JOB.0.2.json" CUDA_VISIBLE_DEVICES)" = 4,5 ]
}

@test "8 tasks on 8 GPUs: exactly the one-GPU plan, no DT_GPUS or DT_NICS" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
EOS
  run_job -N1 --ntasks-per-node=8 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  for i in 0 1 2 3 4 5 6 7; do
    f="$OUT/$JOB.0.$i.json"
    [ "$(field "$f" CUDA_VISIBLE_DEVICES)" = 0,1,2,3,4,5,6,7 ]
    [ "$(field "$f" DT_LOCAL_GPU)" = "$i" ]
    [ "$(field "$f" DT_NIC)" = "${NICS[$i]}" ]
    [ -z "$(field "$f" DT_GPUS)" ]
    [ -z "$(field "$f" DT_NICS)" ]
  done
  run grep -c "in no task's plan" "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
}

@test "verbose: each node's plan names global and local ranks, GPU model, NIC choice" {
  # --label: srun then writes each task's lines whole. Without it, the two
  # nodes' reports (each one write of several KiB, which slurmstepd sends
  # in pieces) can meet in the middle of a line (a CI run's failure).
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train=verbose
srun --label python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=4 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  cat "$OUT/slurm-$JOB.out"
  sed -E 's/^ *[0-9]+: //' "$OUT/slurm-$JOB.out" >"$OUT/unlabelled.out"
  [ "$(grep -c '^rank  local  gpu  model  ' "$OUT/unlabelled.out")" -eq 2 ]
  # rank, local rank, GPUs, model and NIC choice of every row of both tables
  rows=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-3]$/ && $4 == "10de:2330" {
      print $1, $2, $3, ($0 ~ /rdma, same PCIe switch as GPU [0246] \(4 hops\)/) }' \
    "$OUT/unlabelled.out" | sort -n)
  echo "$rows"
  [ "$rows" = "$(printf '%s\n' '0 0 0-1 1' '1 1 2-3 1' '2 2 4-5 1' '3 3 6-7 1' \
    '4 0 0-1 1' '5 1 2-3 1' '6 2 4-5 1' '7 3 6-7 1')" ]
}
