#!/usr/bin/env bats
# A real rendezvous over the contract across nodes: Debian's PyTorch,
# init_process_group("gloo") from the environment alone.

load common

setup() {
  require_cluster
  /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ||
    skip "Debian's python3-torch is not installed"
  make_outdir
}

teardown() {
  cleanup_outdir
}

@test "gloo all-reduce on 2 nodes x 2 tasks from the env contract alone" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train
srun /usr/bin/python3 gloo_allreduce.py
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  [ "$(grep -o 'allreduce sum 10 (want 10) OK' "$OUT/slurm-$JOB.out" | wc -l)" -eq 4 ]
}

@test "mode=node: a plain torchrun with no flags on 2 nodes x 2 workers" {
  write_script job.sh <<'EOS'
#!/bin/bash
#SBATCH --dist-train=mode=node,nproc=2
srun --ntasks-per-node=1 /usr/bin/python3 torchrun_debian.py gloo_allreduce.py
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  [ "$(grep -o 'allreduce sum 10 (want 10) OK' "$OUT/slurm-$JOB.out" | wc -l)" -eq 4 ]
}
