#!/usr/bin/env bash
# What the hang watchdog and its step timing cost a training step: the same
# job (train_linear, 2 ranks on this machine through dt-run, STEPS steps of
# STEP_MS of compute each) with and without DT_WATCHDOG, PAIRS times,
# interleaved (the order alternates within each pair). Prints both medians
# per step and the ratio; run it twice, with STEP_MS=10 (the bar: <= 1 %)
# and STEP_MS=0 (only collectives: the worst case).
#   bench/watchdog_cost.sh [STEP_MS=10] [STEPS=300] [PAIRS=7]
set -euo pipefail
step_ms=${1:-10} steps=${2:-300} pairs=${3:-7}
build=$(cd "$(dirname "$0")/.." && pwd)/build
[[ -x $build/examples/train_linear && -x $build/tools/dt-run ]] ||
  { echo "build first: make all" >&2; exit 1; }
watch_dir=$(mktemp -d)
trap 'rm -rf "$watch_dir"' EXIT
job() { # job [VAR=VALUE...] -> microseconds of one run
  local t0 t1
  t0=$(date +%s%N)
  env -u DT_WATCHDOG -u SLURM_JOB_ID "$@" "$build/tools/dt-run" --standalone --nproc 2 -- \
    "$build/examples/train_linear" 7 "$steps" "$step_ms" >/dev/null
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000))
}
on=(DT_WATCHDOG=60 DT_WATCHDOG_DIR="$watch_dir")
job >/dev/null && job "${on[@]}" >/dev/null # warm both
plain=() watched=()
for i in $(seq "$pairs"); do
  if ((i % 2)); then
    plain+=("$(job)") watched+=("$(job "${on[@]}")")
  else
    watched+=("$(job "${on[@]}")") plain+=("$(job)")
  fi
done
python3 - "$step_ms" "$steps" "$pairs" "${plain[*]}" "${watched[*]}" <<'PY'
import statistics, sys
step_ms, steps, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
plain = [int(x) / 1000 / steps for x in sys.argv[4].split()]
watched = [int(x) / 1000 / steps for x in sys.argv[5].split()]
p, w = statistics.median(plain), statistics.median(watched)
print(f"# train_linear, 2 ranks (dt-run --standalone), {steps} steps of {step_ms} ms, {pairs} interleaved pairs")
print(f"without watchdog   median {p:7.3f} ms per step (min {min(plain):.3f}, max {max(plain):.3f})")
print(f"DT_WATCHDOG=60     median {w:7.3f} ms per step (min {min(watched):.3f}, max {max(watched):.3f})")
print(f"cost: ratio of medians {w / p:.4f} ({100 * (w / p - 1):+.2f} %)")
PY
