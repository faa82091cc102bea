#!/usr/bin/env bats
# The env contract end to end: real sbatch/srun on the local cluster,
# submitted by an unprivileged user, `#SBATCH --dist-train` + bare `srun`.

load common

setup() {
  require_cluster
  make_outdir
}

teardown() {
  if [[ -n ${JOB:-} ]]; then scancel "$JOB" 2>/dev/null || true; fi
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
  # 22.05-23.02: srun does not inherit the job's --cpus-per-task, so the
  # step has what srun asked for; 23.11+ inherits it again. (With CPU
  # binding it is the share's cores.)
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train=bind=gpu+nic
srun python3 dump_task.py .
srun --cpus-per-task=3 python3 dump_task.py .
EOS
  run_job -N2 --ntasks-per-node=1 --cpus-per-task=3 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  local inherited=1
  if release_at_least 23.11; then inherited=3; fi
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0 --omp "$inherited"
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
  [[ "$output" == *"--dist-train: unknown word 'mdoe=node' (did you mean 'mode'?); valid words: on, off, mode=task|node, nproc=N|auto, bind=all|none|cpu+gpu+nic, cpu-share=exclusive|domain, preflight[=SECONDS|off], preflight-policy=warn|fail|requeue, watchdog=SECONDS|off, watchdog-policy=fail|requeue, node-loss=fail|requeue, verbose, quiet"* ]]
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
  # The batch script is none of the 4 tasks: no worker variables (#14).
  run grep -E '"(RANK|WORLD_SIZE|LOCAL_RANK)"' "$OUT/$JOB.batch.0.json"
  [ "$status" -ne 0 ]
  grep -qx "dist-train: the batch script is not one of this job's 4 tasks: RANK, WORLD_SIZE and LOCAL_RANK are set in srun's tasks only (srun python3 train.py, not python3 train.py)" \
    "$OUT/slurm-$JOB.out"
  # The batch step has no reserved ports: its port is derived from
  # (job id, batch step) in the default range 20000-32767.
  want=$((20000 + (JOB * 32 + 31) % 12768))
  grep -q "\"MASTER_PORT\": \"$want\"" "$OUT/$JOB.batch.0.json"
  python3 "$OUT/check_contract.py" "$OUT" "$JOB" 0 --mode node
  run grep -lE '"(MASTER_ADDR|RANK|WORLD_SIZE|DT_EXPORTED)"' "$OUT/$JOB".1.*.json
  [ "$status" -ne 0 ]
}

@test "forgetting srun fails loudly: torch's env:// in a 4-task job's batch script does not train alone" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
python3 gloo_allreduce.py
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = FAILED ]
  grep -q "environment variable RANK expected, but not set" "$OUT/slurm-$JOB.out"
  grep -q "^dist-train: the batch script is not one of this job's 4 tasks: .*(srun python3 train.py" \
    "$OUT/slurm-$JOB.out"
  run grep -q "allreduce sum" "$OUT/slurm-$JOB.out"
  [ "$status" -ne 0 ]
}

@test "a one-task job's batch script is its rank 0 of 1, with no hint" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
python3 gloo_allreduce.py
EOS
  run_job -N1 -n1 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -q "rank 0/1 allreduce sum 1 (want 1) OK" "$OUT/slurm-$JOB.out"
  run grep -q "batch script is not one" "$OUT/slurm-$JOB.out"
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
    # srun's lookup is for the slurmstepds only.
    [ -z "$(field "$f" DT_STEP_FACTS)" ]
  done
}

@test "no time limit, no DT_JOB_DEADLINE: also after the job requeued itself" {
  # A requeue resets a limit the user did not set; when the backfill
  # scheduler starts the job again it gives it a 365-day one (issue #13),
  # which is no deadline either. Whether backfill or the main scheduler
  # starts it here is Slurm's choice: JobDeadlineTest covers both.
  rq="$DT_REPO/build/tools/dt-requeue"
  write_script job.sh <<EOS
#!/bin/bash
#SBATCH --dist-train --requeue
r=\${SLURM_RESTART_COUNT:-0}
mkdir -p run\$r
srun python3 dump_task.py run\$r
if [ "\$r" = 0 ]; then $rq --max 1; sleep 60; fi
EOS
  JOB=$(cd "$OUT" && as_user sbatch --parsable --chdir="$OUT" -o "$OUT/slurm-%j.out" \
    --open-mode=append -N2 --ntasks-per-node=1 job.sh)
  state=$(wait_job "$JOB" 200)
  cat "$OUT/slurm-$JOB.out"
  [ "$state" = COMPLETED ]
  [[ $(scontrol -o show job "$JOB") == *"Restarts=1"* ]]
  for r in 0 1; do
    [ "$(ls "$OUT/run$r/$JOB".*.json | wc -l)" -eq 2 ]
    for f in "$OUT/run$r/$JOB".*.json; do
      d=$(field "$f" DT_JOB_DEADLINE)
      [ -z "$d" ] || { echo "$f: DT_JOB_DEADLINE=$d"; false; }
    done
  done
  JOB=
}

# RPCs slurmctld received that the plugin could have caused (job and node
# lookups; slurm_load_job without SHOW_LOCAL first asks for REQUEST_FED_INFO).
lookup_rpcs() {
  sdiag | awk '/^Remote Procedure Call statistics by message type/ { f = 1; next }
    /^Remote Procedure Call statistics by user/ { f = 0 }
    f && $1 ~ /^REQUEST_(JOB_INFO_SINGLE|JOB_INFO|FED_INFO|NODE_INFO_SINGLE|NODE_INFO)$/ {
      for (i = 2; i <= NF; i++) if ($i ~ /^count:/) { sub(/^count:/, "", $i); n += $i } }
    END { print n + 0 }'
}

@test "a 4-node --dist-train step costs slurmctld one lookup RPC, not one per node" {
  local before plain wired
  before=$(lookup_rpcs)
  as_user bash -c "cd '$OUT' && srun -N4 -n4 --time=5 true"
  plain=$(($(lookup_rpcs) - before))
  before=$(lookup_rpcs)
  as_user bash -c "cd '$OUT' && srun -N4 -n4 --time=5 --dist-train python3 dump_task.py ."
  wired=$(($(lookup_rpcs) - before))
  echo "lookup RPCs (sdiag): plain step $plain, --dist-train step $wired"
  [ "$((wired - plain))" -eq 1 ]
  # ... and every task still learned the deadline from it.
  [ "$(ls "$OUT"/*.json | wc -l)" -eq 4 ]
  for f in "$OUT"/*.json; do
    [[ $(field "$f" DT_JOB_DEADLINE) =~ ^[0-9]+$ ]]
  done
}

@test "salloc --dist-train wires the sruns of the allocation" {
  run as_user bash -c "cd '$OUT' && salloc -N2 --ntasks-per-node=2 --dist-train srun python3 dump_task.py ."
  [ "$status" -eq 0 ]
  job=$(ls "$OUT"/*.0.0.json | head -1 | xargs basename | cut -d. -f1)
  python3 "$OUT/check_contract.py" "$OUT" "$job" 0 --tasks-per-node 2,2
}
