#!/usr/bin/env bash
# dist-train's all-reduce across local-cluster nodes against Open MPI's and
# PyTorch Gloo's, same run: 2 nodes x 1 rank and 2 nodes x 2 ranks, float32
# sum from 4 B to 64 MiB, all three timed alike (a barrier before each call,
# the mean over the timed calls, the slowest rank's; dt-bench,
# bench/mpi_allreduce.c, bench/gloo_allreduce.py), repetitions interleaved,
# medians compared (bench/ratio_table.py). dist-train and Gloo start through
# `srun --dist-train=bind=none`, Open MPI through `srun --mpi=pmix`: the
# local cluster's nodes share this machine's CPUs, and the binding would
# put every node's first rank on the same core, where Open MPI's ranks
# float. Needs a running
# cluster of 2 nodes or more (eval "$(slurm-docker-cluster/local-cluster
# up)"), a built tree (make) and python3-torch; installs Debian's
# openmpi-bin/libopenmpi-dev when missing, like bench/runtime_vs_mpi.sh.
#   bench/cluster_vs_mpi.sh [REPS=3] [HOG=0]
# HOG=1 runs a busy loop per core of this machine (the nodes' CPUs) beside
# the ranks. Open MPI gets mpi_yield_when_idle=1 whenever the ranks
# outnumber this machine's cores or share them with the hog.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3} hog=${2:-0}
bench="$repo/build/tools/dt-bench"
[[ -x $bench ]] || { echo "build first: make" >&2; exit 1; }
command -v srun >/dev/null || { echo "no srun: start a cluster first" >&2; exit 1; }
# shellcheck source=bench/mpi_common.bash
source "$repo/bench/mpi_common.bash"
chmod 755 "$tmp" # the nodes run the MPI program from here
[[ $hog != 1 ]] || start_hogs
columns() { awk -v t="$1" -v r="$2" '/^ +[0-9]/ {print t, r, $1, $2, $4, $5}'; }
sweep() { # sweep PER_NODE REP MIN MAX ITERS WARMUP -> lines in $tmp/PER_NODE
  local per=$1 rep=$2 yield=0 out="$tmp/$1"
  shift 2
  local step=(srun -N2 --ntasks-per-node "$per")
  ((hog == 1 || 2 * per > $(nproc))) && yield=1
  {
    "${step[@]}" --dist-train=bind=none "$bench" -b "$1" -e "$2" -n "$3" -w "$4" 2>/dev/null |
      columns dt "$rep"
    OMPI_MCA_mpi_yield_when_idle=$yield "${step[@]}" --mpi=pmix \
      "$tmp/mpi_allreduce" "$1" "$2" "$3" "$4" 2>/dev/null | columns mpi "$rep"
    # Gloo takes milliseconds where the others take microseconds: fewer calls.
    "${step[@]}" --dist-train=bind=none /usr/bin/python3 "$repo/bench/gloo_allreduce.py" "$1" "$2" \
      $(($3 / 20 > 5 ? $3 / 20 : 5)) $(($4 / 20 > 1 ? $4 / 20 : 1)) 2>/dev/null |
      columns gloo "$rep"
  } >>"$out"
}
small=2000 mid=50
[[ $hog != 1 ]] || small=100 mid=10
for rep in $(seq "$reps"); do
  for per in 1 2; do
    sweep "$per" "$rep" 4 65536 "$small" $((small / 10))
    sweep "$per" "$rep" 131072 4194304 "$mid" $((mid / 10))
    sweep "$per" "$rep" 8388608 67108864 5 1
  done
done
beside=""
[[ $hog != 1 ]] || beside=", a busy loop per core beside them"
for per in 1 2; do
  python3 "$repo/bench/ratio_table.py" "$tmp/$per" \
    "all-reduce float32 sum, 2 local-cluster nodes x $per rank(s), medians of $reps interleaved runs$beside" \
    dt mpi gloo
done
