#!/usr/bin/env bats
# Admin defaults from plugstack.conf arguments, on the running cluster.
# plugstack.conf is read for every job, so each test rewrites the cluster's
# copy and teardown restores it.

load common

setup() {
  require_cluster
  PLUGSTACK="${DT_CLUSTER_DIR:?}/plugstack.conf"
  cp "$PLUGSTACK" "$BATS_TEST_TMPDIR/plugstack.conf.orig"
  grep -q spank_dist_train.so "$PLUGSTACK" || skip "the cluster runs without the plugin"
  make_outdir
}

teardown() {
  if [[ -n ${PLUGSTACK:-} && -f $BATS_TEST_TMPDIR/plugstack.conf.orig ]]; then
    cp "$BATS_TEST_TMPDIR/plugstack.conf.orig" "$PLUGSTACK"
  fi
  if [[ -n ${OUT:-} ]]; then rm -rf "$OUT"; fi
  if [[ -n ${TOPO_DIR:-} ]]; then rm -rf "$TOPO_DIR"; fi
}

# set_args ARGS...: the plugin line with these arguments.
set_args() {
  local plugin
  plugin=$(awk '/spank_dist_train.so/ {print $1, $2; exit}' "$BATS_TEST_TMPDIR/plugstack.conf.orig")
  echo "$plugin $*" >"$PLUGSTACK"
}

@test "master_addr=nodeaddr gives Slurm's NodeAddr; port_range and mode=node defaults apply" {
  set_args master_addr=nodeaddr port_range=30000-30999 mode=node
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  addr=$(scontrol show node node1 | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
  [[ $addr == 10.* ]]
  grep -q "\"MASTER_ADDR\": \"$addr\"" "$OUT/$JOB.batch.0.json"
  want=$((30000 + (JOB * 32 + 31) % 1000))
  grep -q "\"MASTER_PORT\": \"$want\"" "$OUT/$JOB.batch.0.json"
  # mode=node: the script of a 2-node job is neither launcher (#14).
  run grep -q '"NNODES"' "$OUT/$JOB.batch.0.json"
  [ "$status" -ne 0 ]
  grep -q "^dist-train: the batch script is not one of this job's 2 node launchers" \
    "$OUT/slurm-$JOB.out"
}

@test "master_addr_suffix is appended to the hostname" {
  set_args master_addr_suffix=-ib
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
python3 dump_task.py .
EOS
  run_job -N1 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  grep -q '"MASTER_ADDR": "node1-ib"' "$OUT/$JOB.batch.0.json"
}

@test "a bad plugstack argument: sbatch fails naming it, nothing is drained" {
  set_args prot_range=20000-30000
  run as_user sbatch --chdir="$OUT" --wrap true
  [ "$status" -ne 0 ]
  [[ "$output" == *"plugstack.conf: dist-train: argument 'prot_range=20000-30000': unknown key 'prot_range' (did you mean 'port_range'?)"* ]]
  no_node_drained
}

@test "preflight_min_*: the site's floor names nodes the step's median cannot (all as slow)" {
  program=$(grep -o 'preflight_program=[^ ]*' "$BATS_TEST_TMPDIR/plugstack.conf.orig") ||
    skip "the cluster's plugstack.conf names no preflight_program"
  # No node has 100 TB/s of memory bandwidth; 0.01 GFLOP/s every node has.
  set_args "$program" preflight=30 preflight_policy=fail \
    preflight_min_mem_gbps=100000 preflight_min_cpu_gflops=0.01
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun echo trained
echo "srun rc=$?"
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -q '^dist-train: preflight: 2 of 2 nodes are bad or slow:$' "$OUT/slurm-$JOB.out"
  for n in node1 node2; do
    grep -Eq "^  $n: slow: memory [0-9.]+ GB/s, below the site's minimum 100000.00 \(preflight_min_mem_gbps\)$" "$OUT/slurm-$JOB.out"
  done
  run grep -c 'preflight_min_cpu_gflops' "$OUT/slurm-$JOB.out"
  [ "$output" = 0 ]
  grep -q '^srun rc=1$' "$OUT/slurm-$JOB.out"
  run grep -q '^trained$' "$OUT/slurm-$JOB.out"
  [ "$status" -ne 0 ]
  no_node_drained
}

@test "topology=FILE: a DGX H100's GPUs and NICs, by the documented pairing" {
  set_args "topology=$DT_REPO/tests/fixtures/dgx-h100-8gpu.xml" bind=gpu+nic
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
EOS
  run_job -N1 --ntasks-per-node=8 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  nics=(mlx5_0 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_9 mlx5_10 mlx5_11)
  full=$(grep Cpus_allowed_list /proc/self/status | cut -f2)
  for i in 0 1 2 3 4 5 6 7; do
    f="$OUT/$JOB.0.$i.json"
    grep -q '"CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"' "$f"
    grep -q '"CUDA_DEVICE_ORDER": "PCI_BUS_ID"' "$f"
    grep -q "\"DT_LOCAL_GPU\": \"$i\"" "$f"
    grep -q "\"DT_NIC\": \"${nics[$i]}\"" "$f"
    grep -q "\"UCX_NET_DEVICES\": \"${nics[$i]}:1\"" "$f"
    grep -q "\"cpus_allowed\": \"$full\"" "$f"  # bind=gpu+nic: no CPU binding
    # The fixture's ibp* interfaces do not exist on these nodes.
    [ -z "$(field "$f" NCCL_SOCKET_IFNAME)" ]
    [ -z "$(field "$f" GLOO_SOCKET_IFNAME)" ]
  done
  # Nor do its HCAs: one warning on the node says NCCL would use sockets.
  run grep '^dist-train: warning: NCCL will fall back to TCP sockets' "$OUT/slurm-$JOB.out"
  [ "${#lines[@]}" -eq 1 ]
  [[ ${lines[0]} == *": mlx5_0 (local ranks 0): it is not in /sys/class/infiniband (its driver is not loaded, or this task cannot see it); mlx5_3 (local ranks 1): "* ]]
  [[ ${lines[0]} == *"; mlx5_11 (local ranks 7): it is not in /sys/class/infiniband"* ]]
}

@test "NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME: the NIC's interface where it has an address; Gloo runs over it; the user's value wins" {
  # The DGX fixture with mlx5_0's interface renamed to the nodes' eth0:
  # local rank 0's best NIC (4 GPUs and 4 NICs each) has a usable interface,
  # local rank 1's has none.
  # (An admin's topology file: root's, in a directory slurmstepd can open.)
  TOPO_DIR=$(mktemp -d /tmp/dt-topo.XXXXXX)
  chmod 755 "$TOPO_DIR"
  sed 's/name="ibp26s0"/name="eth0"/' "$DT_REPO/tests/fixtures/dgx-h100-8gpu.xml" >"$TOPO_DIR/topo.xml"
  set_args "topology=$TOPO_DIR/topo.xml" bind=gpu+nic
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
srun python3 gloo_allreduce.py
NCCL_SOCKET_IFNAME==eth9 srun python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  for p in 0 2; do
    [ "$(field "$OUT/$JOB.0.$p.json" DT_NIC)" = mlx5_0 ]
    [ "$(field "$OUT/$JOB.0.$p.json" NCCL_SOCKET_IFNAME)" = "=eth0" ]
    [ "$(field "$OUT/$JOB.0.$p.json" GLOO_SOCKET_IFNAME)" = eth0 ]
    [ "$(field "$OUT/$JOB.2.$p.json" NCCL_SOCKET_IFNAME)" = "=eth9" ]
    [ "$(field "$OUT/$JOB.2.$p.json" GLOO_SOCKET_IFNAME)" = eth0 ]
  done
  for p in 1 3; do
    [ -n "$(field "$OUT/$JOB.0.$p.json" DT_NIC)" ]
    [ -z "$(field "$OUT/$JOB.0.$p.json" NCCL_SOCKET_IFNAME)" ]
    [ -z "$(field "$OUT/$JOB.0.$p.json" GLOO_SOCKET_IFNAME)" ]
  done
  [ "$(grep -c 'allreduce sum 10 (want 10) OK' "$OUT/slurm-$JOB.out")" -eq 4 ]
}

@test "a topology that cannot be loaded: one warning per step and node, the job runs unbound" {
  # (The batch step is never bound, so only step 0's two nodes warn.)
  set_args topology=/nonexistent/topology.xml
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  cat "$OUT/slurm-$JOB.out"
  [ "$(grep -c '^dist-train: warning: no topology binding: /nonexistent/topology.xml' "$OUT/slurm-$JOB.out")" -eq 2 ]
  run grep -l '"DT_CPUS"' "$OUT/$JOB".0.*.json
  [ "$status" -ne 0 ]
  grep -q '"RANK": "3"' "$OUT/$JOB.0.3.json"
}

# What Slurm itself does with a plugin built for another release (the
# table in docs/admin-guide.md): a copy of our plugin that claims 21.08.
@test "a plugin of another Slurm release: required fails every srun and sbatch, optional only --dist-train" {
  make -C "$DT_REPO" -s other-release-plugin >/dev/null
  other=$DT_CLUSTER_DIR/plugins/spank_dist_train_2108.so
  cp "$DT_REPO/build/tests/spank_dist_train_2108.so" "$other"
  echo "required $other" >"$PLUGSTACK"
  run as_user bash -c "cd '$OUT' && srun -N1 true"
  echo "required, srun: exit $status: $output"
  [ "$status" -ne 0 ]
  [[ $output == *"Incompatible"* ]]
  run as_user bash -c "cd '$OUT' && sbatch --wrap true"
  echo "required, sbatch: exit $status: $output"
  [ "$status" -ne 0 ]
  echo "optional $other" >"$PLUGSTACK"
  run as_user bash -c "cd '$OUT' && srun -N1 true"
  echo "optional, srun: exit $status: $output"
  [ "$status" -eq 0 ]
  [[ $output == *"Incompatible"* ]]
  run as_user bash -c "cd '$OUT' && srun -N1 --dist-train true"
  echo "optional, srun --dist-train: exit $status: $output"
  [ "$status" -ne 0 ]
  [[ $output == *"unrecognized option"* ]]
  rm -f "$other"
}

@test "a required plugin of another Slurm release keeps slurmd from starting" {
  make -C "$DT_REPO" -s other-release-plugin >/dev/null
  # A second, one-node cluster in private network and mount namespaces, so
  # that it never meets the running one.
  run timeout 90 unshare --net --mount --fork --propagation private bash -c '
    mkdir -p /run/netns && mount -t tmpfs tmpfs /run/netns && ip link set lo up &&
    DT_CLUSTER_DIR=/run/dt-other-release DT_CLUSTER_TIMEOUT=20 \
      "$1/slurm-docker-cluster/local-cluster" up --nodes 1 --proctrack pgid \
      --plugin "$1/build/tests/spank_dist_train_2108.so"' _ "$DT_REPO"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ $output == *"slurmd-node1 exited while waiting"* ]]
  [[ $output == *"Incompatible"* ]]
  [ ! -e /run/dt-other-release ]
}
