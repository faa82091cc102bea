#!/usr/bin/env bash
# Every comparison of the runtime and the plugin in one run, as ratio tables:
# the all-reduce against Open MPI on this machine (2 ranks, 2 ranks beside a
# busy loop per core, 4 ranks) and against PyTorch + Gloo, the same across
# local-cluster nodes (2 x 1 and 2 x 2 ranks, idle and beside the busy
# loops) against both, and what --dist-train adds to a minimal step of 4
# tasks per node at each node count, and launch -> first all-reduce up to
# 1,024 ranks on this machine. As root, on a built tree (make), with
# python3-torch. Uses the running local cluster when it has enough nodes,
# else starts one with the largest count and stops it at the end. Open MPI
# (openmpi-bin) is purged again when this script installed it: it pulls in
# libhwloc-plugins, which changes how hwloc reads XML for the tests.
#   bench/tables.sh [REPS=3] [NODE_COUNTS="1 4 16 64"] [PAIRS=20]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3} counts=${2:-"1 4 16 64"} pairs=${3:-20}
cluster="$repo/slurm-docker-cluster/local-cluster"
[[ -x $repo/build/tools/dt-bench ]] || { echo "build first: make" >&2; exit 1; }
installed_mpi=0 started=0
command -v mpicc >/dev/null || installed_mpi=1
cleanup() {
  ((started == 0)) || "$cluster" down >/dev/null 2>&1 || true
  if ((installed_mpi == 1)); then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq openmpi-bin libopenmpi-dev \
      libopenmpi3 openmpi-common libhwloc-plugins >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
section() { printf '\n## %s\n' "$1"; }

section "One machine: against Open MPI (bench/runtime_vs_mpi.sh)"
bash "$repo/bench/runtime_vs_mpi.sh" 2 "$reps"
bash "$repo/bench/runtime_vs_mpi.sh" 2 "$reps" 1
bash "$repo/bench/runtime_vs_mpi.sh" 4 "$reps"
section "One machine: against PyTorch + Gloo (bench/runtime_vs_torch.sh)"
bash "$repo/bench/runtime_vs_torch.sh"

largest=2
for n in $counts; do ((n <= largest)) || largest=$n; done
if "$cluster" status >/dev/null 2>&1; then
  eval "$("$cluster" env)"
  have=$(sinfo -h -N -o %N | sort -u | wc -l)
  ((have >= largest)) || {
    echo "the running cluster has $have nodes, $largest needed: local-cluster down first" >&2
    exit 1
  }
else
  eval "$("$cluster" up --nodes "$largest")"
  started=1
fi
section "Across cluster nodes: against Open MPI and Gloo (bench/cluster_vs_mpi.sh)"
bash "$repo/bench/cluster_vs_mpi.sh" "$reps"
bash "$repo/bench/cluster_vs_mpi.sh" "$reps" 1
section "What --dist-train adds to a step (bench/step_cost.sh)"
for n in $counts; do
  bash "$repo/bench/step_cost.sh" "$n" 4 "$pairs"
done
