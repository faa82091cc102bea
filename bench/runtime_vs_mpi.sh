#!/usr/bin/env bash
# dist-train's all-reduce against Open MPI's on this machine, same run:
# float32 sum from 4 B to 64 MiB, both timed alike (a barrier before each
# call, the mean over the timed calls, the slowest rank's), repetitions
# interleaved, medians compared. Needs a built tree (make); installs
# Debian's Open MPI when missing (bench/mpi_common.bash).
#   bench/runtime_vs_mpi.sh [RANKS=2] [REPS=3] [HOG=0]
# HOG=1 runs a busy loop per core beside the ranks (Open MPI then gets
# mpi_yield_when_idle=1, the fair setting when ranks share cores).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
ranks=${1:-2} reps=${2:-3} hog=${3:-0}
run="$repo/build/tools/dt-run" bench="$repo/build/tools/dt-bench"
[[ -x $bench ]] || { echo "build first: make" >&2; exit 1; }
# shellcheck source=bench/mpi_common.bash
source "$repo/bench/mpi_common.bash"
mpi_args=(--allow-run-as-root --oversubscribe -np "$ranks")
if [[ $hog == 1 ]]; then
  mpi_args+=(--mca mpi_yield_when_idle 1)
  start_hogs
fi
# Small sizes need many calls for a stable mean, large ones few.
sweep() { # sweep MIN MAX ITERS WARMUP -> "size time busbw wrong" lines, both tools
  local rep=$1
  shift
  "$run" --standalone --nproc "$ranks" -- "$bench" -b "$1" -e "$2" -n "$3" -w "$4" 2>/dev/null |
    awk -v r="$rep" '/^\[0\] +[0-9]/ {print "dt", r, $2, $3, $5, $6}' >>"$tmp/results"
  mpirun "${mpi_args[@]}" "$tmp/mpi_allreduce" "$1" "$2" "$3" "$4" 2>/dev/null |
    awk -v r="$rep" '/^ +[0-9]/ {print "mpi", r, $1, $2, $4, $5}' >>"$tmp/results"
}
# Fewer calls beside a hog: a call then costs up to a scheduler time slice.
small=2000 mid=50
[[ $hog != 1 ]] || small=100 mid=10
for rep in $(seq "$reps"); do
  sweep "$rep" 4 65536 "$small" $((small / 10))
  sweep "$rep" 131072 4194304 "$mid" $((mid / 10))
  sweep "$rep" 8388608 67108864 5 1
done
beside=""
[[ $hog != 1 ]] || beside=", a busy loop per core beside them"
python3 "$repo/bench/ratio_table.py" "$tmp/results" \
  "all-reduce float32 sum, $ranks ranks on one machine, medians of $reps interleaved runs$beside" dt mpi
