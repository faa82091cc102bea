#!/usr/bin/env bats
# Topology binding end to end on the local cluster: each task's real CPU
# affinity is its planned share (the same planner as dt-topo), tasks
# without --dist-train are untouched, the topology is loaded once per step
# per node.

load common

setup() {
  require_cluster
  make_outdir
}

teardown() {
  cleanup_outdir
}

@test "each task's CPU affinity is its planned share, as dt-topo shows it" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  plan=$("$DT_REPO/build/tools/dt-topo" --ntasks 2 --json)
  for f in "$OUT/$JOB".0.*.json; do
    local_rank=$(field "$f" SLURM_LOCALID)
    want=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1])[int(sys.argv[2])]["cpus"]; print(",".join(map(str,r)))' "$plan" "$local_rank")
    got=$(python3 -c 'import sys; out=[]
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-"); out += range(int(a), int(b or a) + 1)
print(",".join(map(str, out)))' "$(field "$f" cpus_allowed)")
    echo "$f: local rank $local_rank allowed $got planned $want DT_CPUS $(field "$f" DT_CPUS)"
    [ "$got" = "$want" ]
    [ "$(field "$f" OMP_NUM_THREADS)" = "$(awk -F, '{print NF}' <<<"$want")" ]
  done
  # The two ranks of a node got disjoint shares.
  a=$(field "$OUT/$JOB.0.0.json" cpus_allowed) b=$(field "$OUT/$JOB.0.1.json" cpus_allowed)
  [ "$a" != "$b" ]
}

@test "tasks without --dist-train keep Slurm's affinity and get no binding variables" {
  write_script job.sh <<'EOS'
#!/bin/bash
srun python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  full=$(grep Cpus_allowed_list /proc/self/status | cut -f2)
  for f in "$OUT/$JOB".0.*.json; do
    [ "$(field "$f" cpus_allowed)" = "$full" ]
    [ -z "$(field "$f" DT_CPUS)" ]
    [ -z "$(field "$f" UCX_NET_DEVICES)" ]
  done
}

@test "bind=none and bind=nic leave the affinity alone" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train=bind=none
srun python3 dump_task.py .
srun --dist-train=bind=nic python3 dump_task.py .
EOS
  run_job -N1 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  full=$(grep Cpus_allowed_list /proc/self/status | cut -f2)
  for f in "$OUT/$JOB".[01].*.json; do [ "$(field "$f" cpus_allowed)" = "$full" ]; done
  [ -z "$(field "$OUT/$JOB.0.0.json" DT_NIC)" ]
  [ -n "$(field "$OUT/$JOB.1.0.json" DT_NIC)" ]
  [ "$(field "$OUT/$JOB.1.0.json" OMP_NUM_THREADS)" = 1 ]
}

@test "the topology is loaded once per step per node, not once per task, from the saved model" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun true
EOS
  run_job -N2 --ntasks-per-node=3 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  n1=$(grep -c "dist-train: step $JOB.0: topology from .* loaded in" "$DT_CLUSTER_DIR/log/slurmd-node1.log")
  n2=$(grep -c "dist-train: step $JOB.0: topology from .* loaded in" "$DT_CLUSTER_DIR/log/slurmd-node2.log")
  grep "dist-train: step $JOB.0: topology" "$DT_CLUSTER_DIR"/log/slurmd-node[12].log
  [ "$n1" -eq 1 ] && [ "$n2" -eq 1 ]
  # slurmd saved the node model beside its XML: no hwloc in the step.
  grep -q "dist-train: step $JOB.0: topology from $DT_CLUSTER_DIR/topology/node1.xml.model loaded in" "$DT_CLUSTER_DIR/log/slurmd-node1.log"
  ! grep -q "saved node model not used" "$DT_CLUSTER_DIR"/log/slurmd-node[12].log
}
