#!/usr/bin/env bats
# The env contract end to end: real sbatch/srun on the local cluster,
# submitted by an unprivileged user, `#SBATCH --dist-train` + bare `srun`.

load common

setup() {
  require_cluster
  make_outdir
}

teardown() {
  cleanup_outdir
}

# layout_job NODES SBATCH-ARGS...: bare srun in a script with the header.
layout_job() {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun python3 dump_task.py .
EOS
  run_job "$@" job.sh
  [ "$JOB_STATE" = COMPLETED ]
}

@test "2x2: every task's variables agree with Slurm's" {
  layout_job -N2 --ntasks-per-node=2
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0 --tasks-per-node 2,2
}

@test "4x3: every task's variables agree with Slurm's" {
  layout_job -N4 --ntasks-per-node=3
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0 --tasks-per-node 3,3,3,3
}

@test "uneven -N2 -n5: LOCAL_WORLD_SIZE follows the real layout" {
  layout_job -N2 -n5 --ntasks-per-node=3
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0 --tasks-per-node 3,2
}

@test "without CPU binding, the step's CPUs per task set OMP_NUM_THREADS" {
  # Since 22.05 srun does not inherit the job's --cpus-per-task: the step
  # has what srun asked for. (With CPU binding it is the share's cores.)
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train=bind=gpu+nic
srun python3 dump_task.py .
srun --cpus-per-task=3 python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=1 --cpus-per-task=3 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0 --omp 1
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 1 --omp 3
}

@test "srun --dist-train in a job without the header wires that step only" {
  write_script job.sh <<'EOS'
#!/bin/bash
srun -N2 -n4 --dist-train python3 dump_task.py .
srun -N2 -n2 python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0
  run grep -l MASTER_ADDR "$OUT/$JOB".1.*.json
  [ "$status" -ne 0 ]
}

@test "a job without --dist-train gets none of our variables" {
  write_script job.sh <<'EOS'
#!/bin/bash
python3 dump_task.py .
srun python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  run grep -lE '"(MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|NODE_RANK|GROUP_[A-Z_]*|ROLE_[A-Z_]*|NNODES|NPROC_PER_NODE|OMP_NUM_THREADS|DT_JOB_TOKEN|DT_EXPORTED|PET_[A-Z_]*|SLURM_SPANK_[A-Za-z_]*)"' "$OUT"/*.json
  [ "$status" -ne 0 ]
  [ "$(ls "$OUT"/*.json | wc -l)" -eq 3 ]
}

@test "a wrong option word: sbatch fails naming it, nothing is drained" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train=mode=task,mdoe=node
srun true
EOS
  run as_user sbatch --chdir="$OUT" "$OUT/job.sh"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--dist-train: unknown word 'mdoe=node' (did you mean 'mode'?); valid words: on, off, mode=task|node, nproc=N|auto, bind=all|none|cpu+gpu+nic, cpu-share=exclusive|domain, verbose, quiet"* ]]
  run as_user srun -N1 --dist-train=mode=gpu true
  [ "$status" -ne 0 ]
  [[ "$output" == *"--dist-train: bad value 'gpu' for 'mode'; valid values: task or node"* ]]
  no_node_drained
}

@test "the batch step is wired too, and a step can override the header" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
python3 dump_task.py .
srun --dist-train=mode=node --ntasks-per-node=1 python3 dump_task.py .
srun --dist-train=off python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  grep -q '"RANK": "0"' "$OUT/$JOB.batch.0.json"
  grep -q '"WORLD_SIZE": "1"' "$OUT/$JOB.batch.0.json"
  # The batch step has no reserved ports: its port is derived from
  # (job id, batch step) in the default range 20000-32767.
  want=$((20000 + (JOB * 32 + 31) % 12768))
  grep -q "\"MASTER_PORT\": \"$want\"" "$OUT/$JOB.batch.0.json"
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0 --mode node
  run grep -lE '"(MASTER_ADDR|RANK|WORLD_SIZE|DT_EXPORTED)"' "$OUT/$JOB".1.*.json
  [ "$status" -ne 0 ]
}

@test "values the user exported win; verbose says so, one line per task" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train=verbose
export MASTER_PORT=23456
srun python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  for f in "$OUT/$JOB".0.*.json; do grep -q '"MASTER_PORT": "23456"' "$f"; done
  run grep -c "^dist-train: node[0-9] step $JOB.0 rank [0-3]/4 local [01]/2 node [01]/2 master node1:23456 mode task; kept user-set MASTER_PORT=23456$" "$OUT/slurm-$JOB.out"
  [ "$output" -eq 4 ]
}

@test "srun --resv-ports=2: MASTER_PORT is Slurm's reserved port" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun --resv-ports=2 python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0 --resv-port
}

@test "concurrent steps of one job get different ports, one token per job" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun -N1 -n1 --exact python3 dump_task.py . &
srun -N1 -n1 --exact python3 dump_task.py . &
wait
EOS
  run_job -N1 -n2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  p0=$(field "$OUT/$JOB.0.0.json" MASTER_PORT)
  p1=$(field "$OUT/$JOB.1.0.json" MASTER_PORT)
  [ -n "$p0" ] && [ "$p0" != "$p1" ]
  t0=$(grep -o '"DT_JOB_TOKEN": "[0-9a-f]*"' "$OUT/$JOB.0.0.json")
  t1=$(grep -o '"DT_JOB_TOKEN": "[0-9a-f]*"' "$OUT/$JOB.1.0.json")
  [ -n "$t0" ] && [ "$t0" = "$t1" ]
  run scontrol show job -d "$JOB"
  [[ "$output" != *"${t0:17:64}"* ]]
}

@test "DT_JOB_DEADLINE: every task learns when the job ends" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
python3 dump_task.py .
srun python3 dump_task.py .
EOS
  now=$(date +%s)
  run_job -N2 --ntasks-per-node=1 --time=10 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  for f in "$OUT/$JOB".*.json; do
    d=$(field "$f" DT_JOB_DEADLINE)
    [[ $d =~ ^[0-9]+$ ]] && (( d >= now + 540 && d <= now + 660 )) || { echo "$f: DT_JOB_DEADLINE=$d, now=$now"; false; }
  done
}

@test "salloc --dist-train wires the sruns of the allocation" {
  run as_user bash -c "cd '$OUT' && salloc -N2 --ntasks-per-node=2 --dist-train srun python3 dump_task.py ."
  [ "$status" -eq 0 ]
  job=$(ls "$OUT"/*.0.0.json | head -1 | xargs basename | cut -d. -f1)
  python3 "$OUT/check_contract.py" "$OUT" "$job" 0 --tasks-per-node 2,2
}
