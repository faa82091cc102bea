#!/usr/bin/env bash
# dist-train's runtime against Debian's PyTorch (torchrun + Gloo, CPU),
# measured in the same run on this machine. Needs python3-torch and a built
# tree (make). Prints one line per claim with the ratio.
#   bench/runtime_vs_torch.sh [RANKS_FOR_LAUNCH=16]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
run="$repo/build/tools/dt-run"
bench="$repo/build/tools/dt-bench"
py=/usr/bin/python3
n=${1:-16}

now() { date +%s.%N; }
done_at() { grep -o 'done at [0-9.]*' | awk '{print $3}' | head -1; }

# 1. Launch to first completed all-reduce, n ranks on one machine.
t0=$(now); t1=$("$run" --standalone --nproc "$n" -- "$bench" --first | done_at)
ours=$(echo "$t1 - $t0" | bc -l)
t0=$(now); t1=$("$py" "$repo/tests/e2e/torchrun_debian.py" --standalone --nproc_per_node="$n" \
  "$repo/bench/first_allreduce.py" 2>/dev/null | done_at)
theirs=$(echo "$t1 - $t0" | bc -l)
printf 'launch -> first all-reduce, %d ranks: dist-train %.3f s, torchrun+gloo %.3f s: %.1fx faster\n' \
  "$n" "$ours" "$theirs" "$(echo "$theirs / $ours" | bc -l)"

# 2. Rendezvous (launch to first all-reduce) growth with the rank count;
# 256 and 1,024 ranks (#32's < 1 s target) 3 times, the median first.
first_at() {
  local t0 t1
  t0=$(now); t1=$("$run" --standalone --nproc "$1" -- "$bench" --first | done_at)
  echo "$t1 - $t0" | bc -l
}
for k in 32 64 128 256 1024; do
  runs=1
  ((k < 256)) || runs=3
  mapfile -t times < <(for _ in $(seq "$runs"); do first_at "$k"; done | sort -n)
  printf 'dist-train launch -> first all-reduce, %4d ranks: %.3f s (median of %d:%s)\n' \
    "$k" "${times[$((runs / 2))]}" "$runs" "$(printf ' %.3f' "${times[@]}")"
done

# 3. All-reduce busbw at 64 MiB, 4 ranks on one node.
ours=$("$run" --standalone --nproc 4 -- "$bench" -b 67108864 -e 67108864 -n 5 -w 1 | awk '/^\[0\] +67108864/ {print $5}')
theirs=$("$py" "$repo/tests/e2e/torchrun_debian.py" --standalone --nproc_per_node=4 \
  "$repo/bench/gloo_busbw.py" 67108864 5 2>/dev/null | awk '/busbw/ {print $(NF-1)}')
printf 'all-reduce busbw 64 MiB, 4 ranks: dist-train %s GB/s, gloo %s GB/s: %.2fx\n' \
  "$ours" "$theirs" "$(echo "$ours / $theirs" | bc -l)"
