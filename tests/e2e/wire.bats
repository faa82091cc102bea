#!/usr/bin/env bats
# dt-wire: the plugin's contract, binding and warning relay without the
# plugin. Each job runs once with `--dist-train` and once with dt-wire and
# `--dist-train=off` (the plugin loaded but doing nothing, as on a cluster
# without it), on the same nodes; every variable of every task is compared.
# Warnings through dt-wire's relay: signals.bats.

load common

setup() {
  require_cluster
  make_outdir
  WIRE="$DT_REPO/build/tools/dt-wire"
  # Both runs on the same two nodes: host names and CPUs must match too.
  NODES=$(sinfo -h -N -o %N | sort -u | head -2 | paste -sd,)
}

teardown() {
  if [[ -n ${JOB:-} ]]; then scancel "$JOB" 2>/dev/null || true; fi
  cleanup_outdir
}

# both_ways WORDS SBATCH-ARGS...: the dump job with the plugin (PLUGIN_JOB)
# and with dt-wire (WIRE_JOB), each COMPLETED.
both_ways() {
  local words=$1
  shift
  write_script plugin.sh <<EOS
#!/bin/bash
srun python3 dump_task.py .
EOS
  write_script wire.sh <<EOS
#!/bin/bash
eval "\$($WIRE --job-env ${words:+--dist-train=$words})"
srun $WIRE -- python3 dump_task.py .
EOS
  # --exclusive: the step's cores are the whole node (compare_wiring.py)
  run_job "--dist-train${words:+=$words}" -J both -w "$NODES" --exclusive "$@" plugin.sh
  [ "$JOB_STATE" = COMPLETED ]
  PLUGIN_JOB=$JOB
  run_job --dist-train=off -J both -w "$NODES" --exclusive "$@" wire.sh
  [ "$JOB_STATE" = COMPLETED ]
  WIRE_JOB=$JOB JOB=
}

@test "task mode 2x2: every variable, CPU set and host is the same with the plugin and with dt-wire" {
  both_ways "" -N2 --ntasks-per-node=2
  python3 "$OUT/compare_wiring.py" "$OUT" "$PLUGIN_JOB" "$WIRE_JOB"
  # and dt-wire really did the work: RANK came from it
  [ "$(field "$OUT/$WIRE_JOB.0.3.json" RANK)" = 3 ]
  [ -n "$(field "$OUT/$WIRE_JOB.0.3.json" DT_CPUS)" ]
}

@test "uneven -N2 -n3, bind=cpu, cpu-share=domain: the same with both" {
  both_ways bind=cpu,cpu-share=domain -N2 -n3
  python3 "$OUT/compare_wiring.py" "$OUT" "$PLUGIN_JOB" "$WIRE_JOB"
  [ "$(field "$OUT/$WIRE_JOB.0.2.json" LOCAL_WORLD_SIZE)" = "$(field "$OUT/$PLUGIN_JOB.0.2.json" LOCAL_WORLD_SIZE)" ]
}

@test "node mode (nproc=2): the launcher variables and PET_* are the same with both" {
  both_ways mode=node,nproc=2 -N2 --ntasks-per-node=1
  python3 "$OUT/compare_wiring.py" "$OUT" "$PLUGIN_JOB" "$WIRE_JOB"
  [ "$(field "$OUT/$WIRE_JOB.0.1.json" PET_NODE_RANK)" = 1 ]
  [ "$(field "$OUT/$WIRE_JOB.0.1.json" NPROC_PER_NODE)" = 2 ]
}

@test "a PyTorch (Gloo) job trains through dt-wire: 2 nodes x 2 ranks all-reduce" {
  /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ||
    skip "Debian's python3-torch is not installed"
  write_script job.sh <<EOS
#!/bin/bash
eval "\$($WIRE --job-env)"
srun $WIRE -- /usr/bin/python3 gloo_allreduce.py
EOS
  run_job --dist-train=off -N2 --ntasks-per-node=2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  [ "$(grep -c "allreduce sum 10 (want 10) OK" "$OUT/slurm-$JOB.out")" -eq 4 ]
}

@test "mistakes are loud: dt-wire outside srun names srun, bad words name the variable, neither runs the program" {
  write_script job.sh <<EOS
#!/bin/bash
$WIRE -- touch ran.batch; echo "batch rc=\$?"
DT_WIRE_OPTIONS=mode=nod srun $WIRE -- touch ran.words; echo "words rc=\$?"
$WIRE --job-env --dist-train=bind=gpus; echo "job-env rc=\$?"
srun $WIRE; echo "no-program rc=\$?"
EOS
  run_job --dist-train=off -N1 -n1 job.sh
  out=$(cat "$OUT/slurm-$JOB.out")
  echo "$out"
  # 26.05 sets SLURM_STEP_ID=-5 in the batch script, older releases none
  [[ $out == *"dt-wire: error: SLURM_STEP_ID"*": dt-wire runs as an srun task, not in the batch script (srun dt-wire -- PROGRAM ...)"* ]]
  [[ $out == *"batch rc=1"* ]]
  [[ $out == *"dt-wire: error: DT_WIRE_OPTIONS: "*"mode"*"task or node"* ]]
  [[ $out == *"words rc=1"* ]]
  [[ $out == *"job-env rc=2"* ]]
  [[ $out == *"no-program rc=2"* ]]
  [ ! -e "$OUT/ran.batch" ] && [ ! -e "$OUT/ran.words" ]
}

@test "dt-wire --hostfile: DeepSpeed's hostfile of the job, node order, slots from tasks or nproc" {
  write_script job.sh <<EOS
#!/bin/bash
$WIRE --hostfile > hostfile.tasks
$WIRE --hostfile --dist-train=mode=node,nproc=3 > hostfile.nproc
scontrol show hostnames "\$SLURM_JOB_NODELIST" > hosts
EOS
  run_job --dist-train=off -N2 --ntasks-per-node=2 job.sh
  [ "$JOB_STATE" = COMPLETED ]
  [ "$(cat "$OUT/hostfile.tasks")" = "$(sed 's/$/ slots=2/' "$OUT/hosts")" ]
  [ "$(cat "$OUT/hostfile.nproc")" = "$(sed 's/$/ slots=3/' "$OUT/hosts")" ]
  [ "$(wc -l <"$OUT/hosts")" -eq 2 ]
}
