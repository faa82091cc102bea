#!/usr/bin/env bats
# The C++ runtime across local-cluster nodes, wired by the plugin alone:
# task mode (srun, one rank per task) and node mode (dt-run per node).

load common

setup() {
  require_cluster
  make_outdir
  TRAIN="$DT_REPO/build/examples/train_linear"
  DTRUN="$DT_REPO/build/tools/dt-run"
  as_user test -x "$TRAIN" || skip "$DT_USER cannot run $TRAIN"
  ONE=$("$DTRUN" --standalone --nproc 1 -- "$TRAIN" 11 | grep -o 'weights .*')
}

teardown() {
  cleanup_outdir
}

same_weights() { # same_weights "weights ..." "weights ..."
  python3 - "$1" "$2" <<'PY'
import sys
a = [float(x) for x in sys.argv[1].split()[1:]]
b = [float(x) for x in sys.argv[2].split()[1:]]
assert len(a) == len(b) == 9 and all(abs(x - y) < 1e-9 for x, y in zip(a, b)), (a, b)
PY
}

@test "srun --dist-train: the C++ trainer on 2 nodes x 2 tasks equals the 1-rank result" {
  write_script job.sh <<EOS
#!/bin/bash
#SBATCH --dist-train
srun $TRAIN 11
EOS
  run_job -N2 --ntasks-per-node=2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  same_weights "$ONE" "$(grep -o 'weights .*' "$OUT/slurm-$JOB.out")"
}

@test "mode=node: one dt-run per node starts the workers, 2 nodes x 2 workers" {
  write_script job.sh <<EOS
#!/bin/bash
#SBATCH --dist-train=mode=node,nproc=2
srun --ntasks-per-node=1 $DTRUN -- $TRAIN 11
EOS
  run_job -N2 --ntasks-per-node=1 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  same_weights "$ONE" "$(grep -o 'weights .*' "$OUT/slurm-$JOB.out")"
  grep -q '^\[0\] step 199 loss' "$OUT/slurm-$JOB.out"
}

@test "2 nodes x 2 ranks: shared memory inside each node, a ring between them; dt-bench checks every size" {
  as_user test -x "$DT_REPO/build/tools/dt-bench" || skip "$DT_USER cannot run dt-bench"
  write_script job.sh <<EOS
#!/bin/bash
srun $DT_REPO/build/tools/dt-bench -b 1 -e 8388608 -n 2 -w 1
EOS
  run_job --dist-train -N2 --ntasks-per-node=2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  grep -qx "# transport: shared memory within 2 machines, tcp ring between them (4 ranks)" "$OUT/slurm-$JOB.out"
  # every size's wrong-element count is 0 (dt-bench's exit code says so too)
  [ "$(awk '$1 ~ /^[0-9]+$/ && $5 != 0' "$OUT/slurm-$JOB.out" | wc -l)" -eq 0 ]
  [ "$(awk '$1 ~ /^[0-9]+$/' "$OUT/slurm-$JOB.out" | wc -l)" -ge 20 ]
}
