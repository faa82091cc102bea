#!/usr/bin/env bats
# The local cluster itself: the compose variant renders the same slurm.conf
# template (no drift), and a running cluster reports itself correctly.

load common

setup() {
  TMP=$(mktemp -d)
}

teardown() {
  rm -rf "$TMP"
}

@test "compose: valid YAML, and slurm.conf differs from the local one only in addresses, paths, ports, proctrack" {
  python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
  run "$DT_REPO/slurm-docker-cluster/local-cluster" compose --nodes 3 --out "$TMP/c"
  [ "$status" -eq 0 ]
  python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); s = d["services"]; assert {"dtctl", "node1", "node2", "node3"} <= set(s), s.keys()' "$TMP/c/docker-compose.yml"
  grep -q '^NodeName=node3 ' "$TMP/c/slurm.conf"
  grep -q '^ProctrackType=proctrack/linuxproc$' "$TMP/c/slurm.conf"
  # Every setting of the template appears in the rendered file, with the
  # same value unless it is one of the per-variant placeholders.
  while IFS= read -r line; do
    [[ $line =~ ^[A-Za-z] ]] || continue
    if [[ $line == *@*@* ]]; then
      grep -q "^${line%%=*}=" "$TMP/c/slurm.conf"
    else
      grep -qxF "$line" "$TMP/c/slurm.conf"
    fi
  done <"$DT_REPO/slurm-docker-cluster/slurm.conf.in"
}

@test "a running cluster: status, env and node names" {
  require_cluster
  run "$DT_REPO/slurm-docker-cluster/local-cluster" status
  [ "$status" -eq 0 ]
  run "$DT_REPO/slurm-docker-cluster/local-cluster" env
  [ "$status" -eq 0 ]
  [[ "$output" == *"export SLURM_CONF="* ]]
  run sinfo -h -N -o '%N'
  [ "${lines[0]}" = node1 ]
  run as_user srun -N2 -n2 hostname
  [ "$status" -eq 0 ]
  [ "$(sort <<<"$output" | tr '\n' ' ')" = "node1 node2 " ]
}

# On a loaded machine a daemon's process can take a while to exec; until it
# does, its command line is local-cluster's own. up used to take that for a
# dead daemon ("munged exited while waiting for munged socket"). A second
# cluster, in private network and mount namespaces, beside the running one.
@test "up on a loaded machine: a daemon still starting is not taken for a dead one" {
  [[ $(id -u) == 0 ]] || skip "needs root (namespaces, daemons)"
  run timeout 90 unshare --net --mount --fork --propagation private bash -c '
    mkdir -p /run/netns && mount -t tmpfs tmpfs /run/netns && ip link set lo up &&
    export DT_CLUSTER_DIR=/run/dt-slow-start DT_CLUSTER_SPAWN_DELAY=0.3 &&
    "$1/slurm-docker-cluster/local-cluster" up --nodes 2 >/dev/null &&
    "$1/slurm-docker-cluster/local-cluster" status &&
    "$1/slurm-docker-cluster/local-cluster" down' _ "$DT_REPO"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output != *"exited while waiting"* ]]
  [ ! -e /run/dt-slow-start ]
}

# Between the moment an exec replaces a process's memory and the moment the new
# program's arguments are in place, the kernel shows an empty command line. up
# took a daemon caught there for a dead one (CI, 26.05, under load: "slurmctld
# exited while waiting for slurmctld to listen"). A child of the sourced script
# execs 400 times in a row, five times over; polled all the while, it must
# never be taken for gone while it still runs (before the fix, 15-18 % of the
# polls did).
@test "a daemon in the middle of an exec is not taken for a dead one" {
  run bash -c '
    source "$1/slurm-docker-cluster/local-cluster"
    alive() {
      local s
      { read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
      s=${s##*) }
      [[ ${s:0:1} != [ZX] ]]
    }
    chain=()
    for ((i = 0; i < 400; i++)); do chain+=(env "DT_X=$STATE/x"); done
    polls=0 wrong=0
    for round in 1 2 3 4 5; do
      "${chain[@]}" true &
      pid=$!
      while alive "$pid"; do
        polls=$((polls + 1))
        is_ours "$pid" || ! alive "$pid" || wrong=$((wrong + 1))
      done
      wait "$pid"
    done
    echo "polls=$polls wrong=$wrong"
    ((polls > 20 && wrong == 0))' _ "$DT_REPO"
  echo "$output"
  [ "$status" -eq 0 ]
}
