#!/usr/bin/env bash
# All-reduce busbw of 2 ranks on two local-cluster nodes (over the
# namespaces' network): dt-bench vs PyTorch + Gloo, same run. Needs a
# running local cluster (eval "$(slurm-docker-cluster/local-cluster up)").
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
ours=$(srun -N2 -n2 --dist-train "$repo/build/tools/dt-bench" -b 67108864 -e 67108864 -n 5 -w 1 | awk '$1 == 67108864 {print $4}')
theirs=$(srun -N2 -n2 --dist-train /usr/bin/python3 "$repo/bench/gloo_busbw.py" 67108864 5 | awk '/busbw/ {print $(NF-1)}')
printf 'all-reduce busbw 64 MiB, 2 ranks on 2 nodes: dist-train %s GB/s, gloo %s GB/s: %.2fx\n' \
  "$ours" "$theirs" "$(echo "$ours / $theirs" | bc -l)"
