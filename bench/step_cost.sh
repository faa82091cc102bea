#!/usr/bin/env bash
# What --dist-train adds to a step: the same minimal step (`srun -N NODES
# --ntasks-per-node TASKS true`) with and without --dist-train, PAIRS times,
# interleaved (the order alternates within each pair), on a running cluster
# (eval "$(slurm-docker-cluster/local-cluster up --nodes 4)"). Prints both
# medians and the ratio; the plugin's own timing lines (topology load and
# plan, per node) come from slurmd's log when DT_CLUSTER_DIR is set.
#   bench/step_cost.sh [NODES=4] [TASKS_PER_NODE=4] [PAIRS=20]
set -euo pipefail
nodes=${1:-4} tasks=${2:-4} pairs=${3:-20}
command -v srun >/dev/null || { echo "no srun: start a cluster first" >&2; exit 1; }
step() { # step [--dist-train] -> milliseconds of one srun
  local t0 t1
  t0=$(date +%s%N)
  srun -N "$nodes" --ntasks-per-node "$tasks" "$@" true 2>/dev/null
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000))
}
step >/dev/null && step --dist-train >/dev/null # warm both paths
plain=() dist=()
for i in $(seq "$pairs"); do
  if ((i % 2)); then
    plain+=("$(step)") dist+=("$(step --dist-train)")
  else
    dist+=("$(step --dist-train)") plain+=("$(step)")
  fi
done
python3 - "$nodes" "$tasks" "$pairs" "${plain[*]}" "${dist[*]}" <<'PY'
import statistics, sys
nodes, tasks, pairs = sys.argv[1:4]
plain = [int(x) / 1000 for x in sys.argv[4].split()]
dist = [int(x) / 1000 for x in sys.argv[5].split()]
p, d = statistics.median(plain), statistics.median(dist)
paired = statistics.median(b - a for a, b in zip(plain, dist))
print(f"# {nodes} nodes x {tasks} tasks, {pairs} interleaved pairs of `srun ... true`")
print(f"plain step      median {p:8.1f} ms  (min {min(plain):.1f}, max {max(plain):.1f})")
print(f"--dist-train    median {d:8.1f} ms  (min {min(dist):.1f}, max {max(dist):.1f})")
print(f"added: median of pair differences {paired:+.1f} ms, ratio of medians {d / p:.3f} ({100 * (d / p - 1):+.1f} %)")
PY
if [[ -n ${DT_CLUSTER_DIR:-} ]]; then
  grep -h "dist-train: step .* loaded in" "$DT_CLUSTER_DIR"/log/slurmd-node*.log | tail -n "$nodes" |
    sed 's/.*dist-train: /slurmd: /'
fi
