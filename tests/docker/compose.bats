#!/usr/bin/env bats
# The Docker compose cluster, started exactly with the commands
# `local-cluster compose` prints, on each Slurm release: a Docker engine
# without its default bridge, without iptables and without a registry
# (scripts/docker-sandbox: Debian's dockerd in a private network namespace),
# unprivileged containers, a 2-node --dist-train job whose output is read
# from the shared volume on this machine.
#
# Runs on the host, as root, after the release passes (scripts/run-tests);
# DT_COMPOSE_RELEASES says which releases (default: 22.05 24.11 26.05).

setup_file() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (a Docker engine of its own)"
  [ -x /usr/sbin/dockerd ] || skip "Debian's docker.io is not installed"
  export DT_REPO=${DT_REPO:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
  HOST_NET_BEFORE=$(host_net)
  export HOST_NET_BEFORE
  local exports
  exports=$("$DT_REPO/scripts/docker-sandbox" start)
  eval "$exports"
  export DOCKER_HOST DOCKER_CONFIG
}

teardown_file() {
  [ -z "${DOCKER_HOST:-}" ] || "$DT_REPO/scripts/docker-sandbox" stop
}

teardown() {
  if [[ -n ${OUT:-} && -f $OUT/docker-compose.yml ]]; then
    (cd "$OUT" && docker compose down -v --timeout 2 >/dev/null 2>&1) || true
  fi
}

# What must not change on the host: its links, routes and IP forwarding.
host_net() {
  ip -o link show | sed 's/ qlen [0-9]*//'
  ip route show
  cat /proc/sys/net/ipv4/ip_forward
}

want_release() {
  [[ " ${DT_COMPOSE_RELEASES:-22.05 24.11 26.05} " == *" $1 "* ]] ||
    skip "Slurm $1 is not in DT_COMPOSE_RELEASES"
}

# compose_cluster RELEASE: generate, then run every printed command.
compose_cluster() {
  OUT=$BATS_FILE_TMPDIR/compose-$1
  rm -rf "$OUT"
  "$DT_REPO/slurm-docker-cluster/local-cluster" compose --slurm "$1" --nodes 2 --out "$OUT" >"$OUT.cmds"
  cat "$OUT.cmds"
  [ "$(wc -l <"$OUT.cmds")" -eq 3 ]
  (
    set -e
    while IFS= read -r line; do
      echo "+ $line"
      eval "$line" 2>&1 | grep -v '^#[0-9]' | tail -5
    done <"$OUT.cmds"
  )
}

# wait_for SECONDS CMD...: until CMD succeeds.
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.5
  done
}

nodes_idle() { [ "$(docker exec dtctl sinfo -h -t idle -o '%D' 2>/dev/null)" = 2 ]; }

job_done() {
  local state
  state=$(docker exec dtctl scontrol -o show job "$1" | grep -o 'JobState=[A-Z]*')
  [[ $state == JobState=COMPLETED || $state == JobState=FAILED || $state == JobState=CANCELLED ]]
}

check_release() {
  local release=$1 job vol ranks
  compose_cluster "$release"
  # The names the guide uses, not <project>-<service>-1.
  [ "$(docker ps --format '{{.Names}}' | sort | tr '\n' ' ')" = "dtctl node1 node2 " ]
  # Unprivileged containers.
  for c in dtctl node1 node2; do
    [ "$(docker inspect -f '{{.HostConfig.Privileged}}' "$c")" = false ]
  done
  wait_for 60 nodes_idle
  docker exec dtctl sinfo -V | grep -q "slurm[-a-z]* $release\."
  # Each rank writes its own file on the shared volume from its own node.
  job=$(docker exec dtctl sbatch --parsable --dist-train -N2 --ntasks-per-node=2 -o 'slurm-%j.out' \
    --wrap 'srun bash -c "echo rank=\$RANK world=\$WORLD_SIZE node_rank=\$NODE_RANK master=\$MASTER_ADDR:\$MASTER_PORT host=\$(hostname) > rank-\$RANK.txt"')
  wait_for 90 job_done "$job"
  docker exec dtctl scontrol -o show job "$job" | grep -q 'JobState=COMPLETED'
  vol=$(docker volume inspect -f '{{.Mountpoint}}' dist-train_jobs)
  ls -la "$vol"
  [ -f "$vol/slurm-$job.out" ]
  ranks=$(cat "$vol"/rank-{0,1,2,3}.txt)
  echo "$ranks"
  port=$(sed -n 's/.*master=node1:\([0-9]*\) .*/\1/p' "$vol/rank-0.txt")
  [ -n "$port" ]
  [ "$ranks" = "rank=0 world=4 node_rank=0 master=node1:$port host=node1
rank=1 world=4 node_rank=0 master=node1:$port host=node1
rank=2 world=4 node_rank=1 master=node1:$port host=node2
rank=3 world=4 node_rank=1 master=node1:$port host=node2" ]
}

@test "compose on Slurm 22.05: the printed commands start dtctl, node1, node2; a 2-node --dist-train job writes its ranks to the shared volume" {
  want_release 22.05
  check_release 22.05
}

@test "compose on Slurm 24.11: the same" {
  want_release 24.11
  check_release 24.11
}

@test "compose on Slurm 26.05: the same" {
  want_release 26.05
  check_release 26.05
}

@test "the host's links, routes and IP forwarding are as before" {
  [ "$(host_net)" = "$HOST_NET_BEFORE" ]
}
