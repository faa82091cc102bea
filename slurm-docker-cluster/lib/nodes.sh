# shellcheck shell=bash
# local-cluster: the mode and proctrack choice, the network namespaces and the daemons.
# Sourced by ../local-cluster, which defines the settings they use.

# ---------------------------------------------------------------- mode and proctrack

netns_possible() { command -v ip >/dev/null && unshare --net --uts --mount true 2>/dev/null; }

multi_possible() {
  slurmd -h 2>&1 | grep -q -- '-N' || {
    log "slurmd was built without multiple-slurmd support (no -N option)"
    return 1
  }
  local p
  for p in "$MULTI_CTL_PORT" $(seq $((MULTI_NODE_PORT_BASE + 1)) $((MULTI_NODE_PORT_BASE + NODES))); do
    if port_listening /proc/net/tcp "$p"; then
      log "port $p on this host is in use"
      return 1
    fi
  done
}

choose_mode() {
  case $MODE_WANTED in
  netns) netns_possible || die "DT_CLUSTER_MODE=netns but 'unshare --net --uts --mount' fails here" ;;
  multi) multi_possible || die "DT_CLUSTER_MODE=multi is not possible (see above)" ;;
  auto)
    if ! netns_possible; then
      log "network namespaces unavailable ('unshare --net' fails): falling back to" \
        "multiple-slurmd mode (all nodes on 127.0.0.1, one port each, shared hostname)"
      multi_possible || die "neither network namespaces nor multiple-slurmd mode work here (see above)"
      MODE_WANTED_RESOLVED=multi
    fi
    ;;
  esac
  MODE=${MODE_WANTED_RESOLVED:-$MODE_WANTED}
  [[ $MODE != auto ]] || MODE=netns
}

cgroup_v1_usable() {
  local probe=/sys/fs/cgroup/freezer/dt-probe.$$
  [[ -d /sys/fs/cgroup/freezer ]] && mkdir "$probe" 2>/dev/null && rmdir "$probe"
}

resolve_proctrack() {
  if [[ -z $PROCTRACK ]]; then
    if cgroup_v1_usable; then PROCTRACK=cgroup; else PROCTRACK=pgid; fi
  elif [[ $PROCTRACK == cgroup ]] && ! cgroup_v1_usable; then
    die "--proctrack cgroup: no writable cgroup v1 freezer hierarchy at /sys/fs/cgroup/freezer"
  fi
}

# ---------------------------------------------------------------- network

ns_name() { printf 'dt-%s' "$1"; }
veth_name() { printf 'dtv-%s' "$1"; }

check_network_free() {
  ! ip link show "$BRIDGE" >/dev/null 2>&1 ||
    die "bridge $BRIDGE already exists (another local cluster? try DT_CLUSTER_DIR=... local-cluster down)"
  ! ip -4 -o addr show | grep -qF " $NET." ||
    die "this host already has an address in $NET.0/24 (set DT_CLUSTER_NET)"
}

make_bridge() {
  ip link add "$BRIDGE" type bridge
  record link "$BRIDGE"
  ip addr add "$NET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
}

# Remembers whether 'ip netns add' turned /run/netns into a mount (undone by down).
note_netns_dir() {
  [[ -d /run/netns ]] || record dir /run/netns
  mountpoint -q /run/netns 2>/dev/null || record mount /run/netns
}

# add_ns HOSTNAME ADDR: a network namespace wired to the bridge.
add_ns() {
  local ns veth
  ns=$(ns_name "$1")
  veth=$(veth_name "$1")
  ip netns add "$ns"
  record netns "$ns"
  ip link add "$veth" type veth peer name eth0 netns "$ns"
  record link "$veth"
  ip link set "$veth" master "$BRIDGE" up
  ip -n "$ns" addr add "$2/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
}

setup_network() {
  check_network_free
  make_bridge
  note_netns_dir
  add_ns "$CTL_NAME" "$NET.2"
  local k
  for ((k = 1; k <= NODES; k++)); do
    add_ns "node$k" "$(node_addr "$NET" "$k")"
  done
}

# ---------------------------------------------------------------- daemons

record_pid() { printf '%s %s\n' "$1" "$2" >>"$STATE/daemons.pids"; }

# A recorded pid is ours while its command line still names the state dir
# (guards against pid reuse), or while it is a live child of this very script
# that has not got there yet: start_daemon's subshell before it execs (its
# command line is still this script's), or a process in the middle of an exec
# (the kernel shows an empty command line until the new program's arguments are
# in place). A loaded machine stretches both moments; up took such a daemon for
# a dead one ("munged exited while waiting", "slurmctld exited while waiting").
# A zombie is not ours.
is_ours() {
  local cmd stat
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
  [[ $cmd == *"$STATE/"* ]] && return 0
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) } # "STATE PPID ..." (the name before it may hold anything)
  [[ $stat =~ ^[^ZX]\ $$\  ]]
}

# start_daemon NAME HOST CMD...: runs CMD in the background and records its pid.
# HOST '' = this host's namespaces; else the namespaces of HOST (hostname set,
# hosts file bind-mounted over /etc/hosts). The background subshell, nsenter,
# unshare and sh all exec, so $! is the daemon's own pid. Until the subshell
# execs, that pid's command line is this script's (is_ours knows);
# DT_CLUSTER_SPAWN_DELAY (seconds, tests only) widens that window.
start_daemon() {
  local name=$1 host=$2 enter=()
  shift 2
  if [[ -n $host ]]; then
    # shellcheck disable=SC2016 # expanded by the inner sh
    enter=(nsenter --net="/run/netns/$(ns_name "$host")" unshare --uts --mount --
      sh -c 'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"'
      sh "$host" "$STATE/hosts")
  fi
  {
    spawn_delay
    exec setsid "${enter[@]}" "$@"
  } </dev/null >>"$STATE/log/$name.out" 2>&1 &
  record_pid "$name" $!
}
spawn_delay() { [[ -z ${DT_CLUSTER_SPAWN_DELAY:-} ]] || sleep "$DT_CLUSTER_SPAWN_DELAY"; }

start_munged() {
  mungekey --create --keyfile="$STATE/munge-key/munge.key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$STATE/munge-key/munge.key" bs=1024 count=1 status=none
  chmod 0600 "$STATE/munge-key/munge.key"
  start_daemon munged '' munged -F --socket="$STATE/munge/munge.socket.2" \
    --key-file="$STATE/munge-key/munge.key" --pid-file="$STATE/pid/munged.pid" \
    --seed-file="$STATE/munge-key/munged.seed"
  wait_for "munged socket" test -S "$STATE/munge/munge.socket.2"
}

ctl_port() { if [[ $MODE == multi ]]; then echo "$MULTI_CTL_PORT"; else echo 6817; fi; }

# port_listening TCP_TABLE PORT: true if PORT is in LISTEN state (0A) in the table.
port_listening() {
  local hex
  hex=$(printf '%04X' "$2")
  grep -qE "^ *[0-9]+: [0-9A-F]+:$hex [0-9A-F]+:0000 0A" "$1" 2>/dev/null
}

start_slurmctld() {
  local host=$CTL_NAME
  [[ $MODE == netns ]] || host=''
  start_daemon slurmctld "$host" slurmctld -D -i -f "$STATE/slurm.conf"
  local pid
  pid=$(daemon_pid slurmctld)
  wait_for "slurmctld to listen" port_listening "/proc/$pid/net/tcp" "$(ctl_port)"
}

start_slurmds() {
  local k host
  for ((k = 1; k <= NODES; k++)); do
    host=node$k
    [[ $MODE == netns ]] || host=''
    start_daemon "slurmd-node$k" "$host" slurmd -D -N "node$k" -f "$STATE/slurm.conf"
  done
}

daemon_pid() { awk -v n="$1" '$1 == n { print $2 }' "$STATE/daemons.pids" 2>/dev/null; }
daemon_names() { awk '{ print $1 }' "$STATE/daemons.pids" 2>/dev/null; }

# Fails (non-zero) naming the first recorded daemon that is no longer running.
all_daemons_alive() {
  local name
  for name in $(daemon_names); do
    is_ours "$(daemon_pid "$name")" || {
      DEAD_DAEMON=$name
      return 1
    }
  done
}

# wait_for WHAT CMD...: polls CMD every 20-100 ms until it succeeds; fails after
# $TIMEOUT s or as soon as a recorded daemon dies.
wait_for() {
  local what=$1 deadline delay=0.02
  shift
  deadline=$(($(now_ms) + TIMEOUT * 1000))
  until "$@"; do
    all_daemons_alive || die "$DEAD_DAEMON exited while waiting for $what"
    (($(now_ms) < deadline)) || die "timed out after ${TIMEOUT}s waiting for $what"
    sleep "$delay"
    [[ $delay == 0.1 ]] || delay=0.05
  done
}

# sinfo lines "nodeK state" (state with Slurm's suffixes: * not responding, ~ power).
node_states() { sinfo -h -N -o '%N %t' 2>/dev/null | sort -u; }

all_nodes_idle() {
  local n
  n=$(node_states | awk '$2 == "idle"' | wc -l)
  [[ $n -eq $NODES ]]
}

# Nodes reachable and usable (idle, allocated, mixed or completing).
all_nodes_healthy() {
  local states n
  states=$(node_states) || return 1
  n=$(awk '$2 ~ /^(idle|alloc|mix|comp)$/' <<<"$states" | wc -l)
  [[ $n -eq $NODES ]]
}
