# shellcheck shell=bash
# local-cluster: validation, state files, the rendered configuration and the plugin.
# Sourced by ../local-cluster, which defines the settings they use.

# ---------------------------------------------------------------- validation

check_static_settings() {
  [[ $STATE =~ ^/[A-Za-z0-9._/-]+$ && $STATE != / ]] ||
    die "DT_CLUSTER_DIR must be an absolute path of [A-Za-z0-9._/-]: '$STATE'"
  [[ $NET =~ ^(10\.[0-9]{1,3}|192\.168|172\.(1[6-9]|2[0-9]|3[01]))\.[0-9]{1,3}$ ]] ||
    die "DT_CLUSTER_NET must be a private /24 prefix like 10.213.0: '$NET'"
  [[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "DT_CLUSTER_TIMEOUT must be a positive integer: '$TIMEOUT'"
  [[ $MODE_WANTED =~ ^(auto|netns|multi)$ ]] ||
    die "DT_CLUSTER_MODE must be auto, netns or multi: '$MODE_WANTED'"
}

check_nodes() {
  if [[ ! $1 =~ ^[1-9][0-9]*$ ]] || ((10#$1 > MAX_NODES)); then
    die "--nodes must be an integer in 1..$MAX_NODES: '$1'"
  fi
}

check_plugstack_args() {
  [[ $1 != *$'\n'* && $1 != *'#'* ]] || die "--plugstack-args must be one line without '#'"
}

need_value() { [[ $# -ge 2 ]] || die "$1 needs a value"; }

# Parses the options of up, compose and reload-plugin into the globals above.
# shellcheck disable=SC2034 # OUT_DIR, COMPOSE_RELEASE, GIVEN: read in compose.sh and lifecycle.sh
parse_opts() {
  local allowed=$1
  shift
  while [[ $# -gt 0 ]]; do
    [[ " $allowed " == *" $1 "* ]] || die "unknown option '$1' (see --help)"
    need_value "$@"
    case $1 in
    --nodes) check_nodes "$2" && NODES=$((10#$2)) ;;
    --proctrack)
      [[ $2 =~ ^(cgroup|pgid|linuxproc)$ ]] || die "--proctrack must be cgroup, pgid or linuxproc: '$2'"
      PROCTRACK=$2
      ;;
    --plugin) PLUGIN=$(realpath -m -- "$2") ;;
    --plugstack-args) check_plugstack_args "$2" && PLUGSTACK_ARGS=$2 ;;
    --out) OUT_DIR=$(realpath -m -- "$2") ;;
    --slurm) COMPOSE_RELEASE=$2 ;;
    esac
    GIVEN[$1]=1
    shift 2
  done
}

# ---------------------------------------------------------------- state files

state_exists() { [[ -f $STATE/.dt-cluster ]]; }

save_settings() {
  local k
  for k in MODE NODES PROCTRACK PLUGIN PLUGSTACK_ARGS NET; do
    printf '%s=%q\n' "$k" "${!k}"
  done >"$STATE/cluster.env"
}

load_settings() {
  [[ -f $STATE/cluster.env ]] || return 1
  local k v
  while IFS='=' read -r k v; do
    case $k in
    MODE | NODES | PROCTRACK | PLUGIN | PLUGSTACK_ARGS) printf -v "$k" '%s' "$(eval "printf %s $v")" ;;
    esac
  done <"$STATE/cluster.env"
}

# Appends a resource to the ledger that 'down' undoes in reverse order.
record() { printf '%s\n' "$*" >>"$STATE/created"; }

make_state_dir() {
  [[ ! -e $STATE ]] || die "$STATE exists but is not a local-cluster state dir; refusing to use it"
  mkdir -p "$STATE"
  : >"$STATE/.dt-cluster"
  chmod 0755 "$STATE"
  mkdir -p "$STATE"/{log,pid,plugins,ctld-state,spool,tmp}
  mkdir -m 0711 "$STATE/munge"
  mkdir -m 0700 "$STATE/munge-key"
  chmod 0700 "$STATE/ctld-state"
  chmod 0755 "$STATE/tmp"
}

make_node_dirs() {
  local k
  for ((k = 1; k <= NODES; k++)); do
    mkdir -m 0755 "$STATE/spool/node$k"
    mkdir -m 1777 "$STATE/tmp/node$k"
  done
}

# Writes $2 to file $1 through a temp file + mv, so readers never see half a file.
write_atomic() {
  local tmp
  tmp=$(mktemp "$1.XXXXXX")
  printf '%s' "$2" >"$tmp"
  chmod 0644 "$tmp"
  mv -f "$tmp" "$1"
}

# ---------------------------------------------------------------- config rendering

# render_conf STATE_PATH CTL_ADDR CTL_PORT SLURMD_PORT PROCTRACK NODE_LINES
render_conf() {
  local t
  t=$(<"$TEMPLATE")
  t=${t//@CTL_HOST@/$(ctl_hostname)}
  t=${t//@STATE@/$1}
  t=${t//@CTL_ADDR@/$2}
  t=${t//@CTL_PORT@/$3}
  t=${t//@SLURMD_PORT@/$4}
  t=${t//@PROCTRACK@/$5}
  t=${t//@NODES@/$6}
  if [[ $t == *@[A-Z_]*@* ]]; then
    die "unsubstituted placeholder in $TEMPLATE: $(grep -o '@[A-Z_]*@' <<<"$t" | head -1)"
  fi
  printf '%s\n' "$t"
}

ctl_hostname() {
  if [[ $MODE == multi ]]; then hostname -s; else printf '%s' "$CTL_NAME"; fi
}

node_addr() { printf '%s.%d' "$1" $((10 + $2)); }

# node_lines PREFIX: NodeName lines for netns/compose mode (own address per node).
node_lines() {
  local k
  for ((k = 1; k <= NODES; k++)); do
    printf 'NodeName=node%d NodeAddr=%s\n' "$k" "$(node_addr "$1" "$k")"
  done
}

# Multiple-slurmd mode: every node on 127.0.0.1 with its own port.
multi_node_lines() {
  local k
  for ((k = 1; k <= NODES; k++)); do
    printf 'NodeName=node%d NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d\n' \
      "$k" $((MULTI_NODE_PORT_BASE + k))
  done
}

cgroup_conf() {
  cat <<'EOF'
# Only proctrack/cgroup uses this (task/none); autodetect finds v1 or v2.
CgroupPlugin=autodetect
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
}

host_names() {
  local long short
  long=$(hostname 2>/dev/null || true)
  short=$(hostname -s 2>/dev/null || true)
  [[ $short == "$long" ]] && short=''
  printf '%s' "$long${short:+ $short}"
}

hosts_file() {
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n'
  # Slurm 24.11+ slurmctld resolves the client's own host name to call srun
  # and salloc back: this machine's names go on its bridge address.
  printf '%s.1\tdthost %s\n%s.2\t%s\n' "$NET" "$(host_names)" "$NET" "$CTL_NAME"
  local k
  for ((k = 1; k <= NODES; k++)); do
    printf '%s\tnode%d\n' "$(node_addr "$NET" "$k")" "$k"
  done
}

write_local_configs() {
  local nodes
  if [[ $MODE == multi ]]; then
    nodes=$(multi_node_lines)
    render_conf "$STATE" 127.0.0.1 "$MULTI_CTL_PORT" 6818 "$PROCTRACK" "$nodes" >"$STATE/slurm.conf"
  else
    nodes=$(node_lines "$NET")
    render_conf "$STATE" "$NET.2" 6817 6818 "$PROCTRACK" "$nodes" >"$STATE/slurm.conf"
  fi
  cgroup_conf >"$STATE/cgroup.conf"
  hosts_file >"$STATE/hosts"
  chmod 0644 "$STATE/slurm.conf" "$STATE/cgroup.conf" "$STATE/hosts"
}

# ---------------------------------------------------------------- plugin

plugstack_line() { printf 'required %s %s\n' "$1" "${2-$PLUGSTACK_ARGS}"; }

# The local cluster keeps dist-train's topology cache in its state dir, so
# that down removes it too (unless --plugstack-args names another place),
# and runs the dt-preflight built beside the plugin (build/tools/).
local_plugstack_args() {
  local args=$PLUGSTACK_ARGS preflight
  preflight=$(realpath -m -- "$(dirname "$PLUGIN")/../tools/dt-preflight")
  if [[ $args != *preflight_program=* && -x $preflight ]]; then
    args="preflight_program=$preflight${args:+ $args}"
  fi
  if [[ $args != *topology_cache=* ]]; then
    args="topology_cache=$STATE/topology/%h.xml${args:+ $args}"
  fi
  printf '%s' "$args"
}

# install_plugin DEST_DIR PLUGSTACK_PATH_OF_PLUGIN: copies the plugin (new inode)
# and writes DEST_DIR/../plugstack.conf.
install_plugin() {
  local dir=$1 loaded_path=$2 args=${3-$PLUGSTACK_ARGS} conf tmp
  conf=$(dirname "$dir")/plugstack.conf
  mkdir -p "$dir"
  if [[ ! -f $PLUGIN ]]; then
    log "warning: no SPANK plugin at $PLUGIN; plugstack.conf is empty (cluster works without dist-train)"
    write_atomic "$conf" ''
    return 0
  fi
  tmp=$(mktemp "$dir/.spank_dist_train.so.XXXXXX")
  cp -- "$PLUGIN" "$tmp"
  chmod 0755 "$tmp"
  mv -f -- "$tmp" "$dir/spank_dist_train.so"
  write_atomic "$conf" "$(plugstack_line "$loaded_path" "$args")"$'\n'
  log "plugin $PLUGIN installed as $dir/spank_dist_train.so"
}

install_local_plugin() {
  install_plugin "$STATE/plugins" "$STATE/plugins/spank_dist_train.so" "$(local_plugstack_args)"
}
