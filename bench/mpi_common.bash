# Sourced by the benches against Open MPI (bench/runtime_vs_mpi.sh,
# bench/cluster_vs_mpi.sh): installs Debian's openmpi-bin/libopenmpi-dev
# when missing (as root; they pull in libhwloc-plugins, whose libxml2
# reader hwloc then prefers for XML files), makes $tmp (removed on exit,
# with any busy loops start_hogs started) and builds $tmp/mpi_allreduce
# from bench/mpi_allreduce.c. Needs $repo.
# shellcheck shell=bash
: "${repo:?bench/mpi_common.bash is sourced by a script that sets repo}"
if ! command -v mpicc >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openmpi-bin libopenmpi-dev >/dev/null
fi
tmp=$(mktemp -d)
hogs=()
cleanup() {
  ((${#hogs[@]} == 0)) || kill "${hogs[@]}" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mpicc -O2 -o "$tmp/mpi_allreduce" "$repo/bench/mpi_allreduce.c"
# One busy loop per core of this machine, killed on exit.
start_hogs() {
  for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    hogs+=($!)
  done
}
