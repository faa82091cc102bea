# shellcheck shell=bash
# local-cluster: up, down, env, status and reload-plugin.
# Sourced by ../local-cluster, which defines the settings they use.

# ---------------------------------------------------------------- up

# shellcheck disable=SC2153 # STATE is local-cluster's setting, no misspelt 'state'
print_exports() {
  printf 'export SLURM_CONF=%q\n' "$STATE/slurm.conf"
  printf 'export DT_CLUSTER_DIR=%q\n' "$STATE"
  printf 'export DT_CLUSTER_NODES=%q\n' "$NODES"
}

# Tails of the daemon logs; a daemon's stderr (NAME.out) only where its log file
# is empty (errors before the log was opened, and munged).
show_log_tails() {
  local f
  for f in "$STATE"/log/*; do
    [[ -s $f ]] || continue
    [[ $f != *.out || ! -s ${f%.out}.log ]] || continue
    printf '==== %s (last 15 lines) ====\n' "$f" >&2
    tail -n 15 "$f" >&2
  done
  [[ -z ${SLURM_CONF:-} ]] || node_states | sed 's/^/sinfo: /' >&2 || true
}

on_up_exit() {
  local rc=$?
  [[ $UP_DONE -eq 0 && $rc -ne 0 ]] || return 0
  log "up failed (exit $rc)"
  show_log_tails
  log "tearing down the partial cluster"
  teardown || true
  exit 1
}

# Differences between the running cluster and what this 'up' asks for.
differences() {
  local want_nodes=$1 want_proctrack=$2 want_plugin=$3 want_args=$4
  [[ $want_nodes == "$NODES" ]] || echo "it has $NODES nodes, asked for $want_nodes"
  [[ -z ${GIVEN[--proctrack]:-} || $want_proctrack == "$PROCTRACK" ]] ||
    echo "it uses proctrack/$PROCTRACK, asked for $want_proctrack"
  [[ -z ${GIVEN[--plugin]:-} || $want_plugin == "$PLUGIN" ]] ||
    echo "its plugin is $PLUGIN, asked for $want_plugin"
  [[ -z ${GIVEN[--plugstack-args]:-} || $want_args == "$PLUGSTACK_ARGS" ]] ||
    echo "its plugstack args are '$PLUGSTACK_ARGS', asked for '$want_args'"
  all_daemons_alive || echo "daemon $DEAD_DAEMON is not running"
  all_nodes_healthy || echo "not all nodes are usable: $(node_states | tr '\n' ' ')"
}

# Sets REUSED=1 after printing exports when the running cluster matches; cleans
# up when no daemon is left (stale state); exits 1 when it differs.
reuse_running() {
  local want=("$NODES" "$PROCTRACK" "$PLUGIN" "$PLUGSTACK_ARGS") diff
  load_settings || true
  export SLURM_CONF=$STATE/slurm.conf
  if ! any_daemon_alive; then
    log "no daemon of the cluster in $STATE is alive: cleaning up its leftovers"
    teardown
    NODES=${want[0]} PROCTRACK=${want[1]} PLUGIN=${want[2]} PLUGSTACK_ARGS=${want[3]}
    return 0
  fi
  diff=$(differences "${want[@]}")
  if [[ -n $diff ]]; then
    local lines
    mapfile -t lines <<<"$diff"
    log "a cluster is already running from $STATE and differs:"
    printf '  - %s\n' "${lines[@]}" >&2
    die "run 'local-cluster down' first"
  fi
  log "cluster already up ($NODES nodes, proctrack/$PROCTRACK)"
  print_exports
  REUSED=1
}

any_daemon_alive() {
  local name
  for name in $(daemon_names); do
    ! is_ours "$(daemon_pid "$name")" || return 0
  done
  return 1
}

start_cluster() {
  local t0
  t0=$(now_ms)
  choose_mode
  resolve_proctrack
  make_state_dir
  trap on_up_exit EXIT
  trap 'exit 130' INT TERM
  save_settings
  write_local_configs
  make_node_dirs
  install_local_plugin
  [[ $MODE == multi ]] || setup_network
  export SLURM_CONF=$STATE/slurm.conf
  start_munged
  start_slurmctld
  start_slurmds
  wait_for "all $NODES nodes to be idle" all_nodes_idle
  UP_DONE=1
  log "up: $NODES nodes idle ($MODE mode, proctrack/$PROCTRACK) in $(($(now_ms) - t0)) ms"
  print_exports
}

cmd_up() {
  parse_opts "--nodes --proctrack --plugin --plugstack-args" "$@"
  need_root
  [[ -f $TEMPLATE ]] || die "template $TEMPLATE is missing"
  if state_exists; then
    reuse_running
    [[ $REUSED -eq 0 ]] || return 0
  fi
  start_cluster
}

# ---------------------------------------------------------------- down

# cancel_jobs SECONDS: cancels every job and waits up to SECONDS for them to end.
cancel_jobs() {
  is_ours "$(daemon_pid slurmctld)" || return 0
  local ids deadline
  ids=$(squeue -h -o %A 2>/dev/null) || return 0
  [[ -n $ids ]] || return 0
  log "cancelling jobs: $(tr '\n' ' ' <<<"$ids")"
  # shellcheck disable=SC2086 # one id per word
  scancel $ids 2>/dev/null || true
  deadline=$(($(now_ms) + $1 * 1000))
  while [[ -n $(squeue -h -o %A 2>/dev/null | head -1) ]] && (($(now_ms) < deadline)); do
    sleep 0.1
  done
}

# signal_and_wait SIGNAL SECONDS PID...: signals the pids that are still ours
# and waits until they are gone; true if all are gone.
signal_and_wait() {
  local sig=$1 secs=$2 pid deadline left
  shift 2
  for pid in "$@"; do ! is_ours "$pid" || kill "-$sig" "$pid" 2>/dev/null || true; done
  deadline=$(($(now_ms) + secs * 1000))
  while :; do
    left=0
    for pid in "$@"; do ! is_ours "$pid" || left=1; done
    ((left)) || return 0
    (($(now_ms) < deadline)) || return 1
    sleep 0.05
  done
}

# stop_pids SECONDS PID...: SIGTERM, then SIGKILL after SECONDS.
stop_pids() {
  local secs=$1
  shift
  [[ $# -gt 0 ]] || return 0
  signal_and_wait TERM "$secs" "$@" && return 0
  vlog "still running after SIGTERM: $(ps -o pid=,comm= -p "$(tr ' ' , <<<"$*")" | tr '\n' ' ')"
  signal_and_wait KILL 5 "$@" || log "warning: could not stop pids $*"
}

slurm_daemon_pids() {
  local name
  for name in $(daemon_names); do
    [[ $name == munged ]] || daemon_pid "$name"
  done
}

ledger() { if [[ -f $STATE/created ]]; then tac "$STATE/created"; fi; }

# kill_ns_stragglers [all|nodes]: kills every process in our network namespaces
# (only the nodes' with 'nodes') except the recorded daemons: job steps and
# stray tasks such as setsid children that slurmd would wait for.
kill_ns_stragglers() {
  local kind name pid keep
  keep=" $(slurm_daemon_pids | tr '\n' ' ') "
  while read -r kind name; do
    [[ $kind == netns ]] || continue
    [[ ${1:-all} == all || $name == "$(ns_name node)"* ]] || continue
    for pid in $(ip netns pids "$name" 2>/dev/null); do
      [[ $keep != *" $pid "* ]] || continue
      log "killing leftover $pid ($(cat "/proc/$pid/comm" 2>/dev/null)) in $name"
      kill -KILL "$pid" 2>/dev/null || true
    done
  done < <(ledger)
}

# Multiple-slurmd mode: slurmstepds that still hold our log files open.
kill_stepd_stragglers() {
  local pid
  for pid in $(pgrep -x slurmstepd); do
    [[ -n $(find "/proc/$pid/fd" -lname "$STATE/*" -print -quit 2>/dev/null) ]] || continue
    log "killing leftover slurmstepd $pid"
    kill -KILL "$pid" 2>/dev/null || true
  done
}

remove_network() {
  local kind name
  while read -r kind name; do
    case $kind in
    link) ip link del "$name" 2>/dev/null || true ;;
    netns) ip netns del "$name" 2>/dev/null || log "warning: could not delete netns $name" ;;
    mount) [[ -n $(ls -A "$name" 2>/dev/null) ]] || umount "$name" 2>/dev/null || true ;;
    dir) rmdir "$name" 2>/dev/null || true ;;
    esac
  done < <(ledger)
}

# Kills what is left in the slurm_<node> cgroups of our nodes, then removes the
# (now empty) cgroups slurmd leaves behind.
remove_cgroups() {
  local k d pid
  for ((k = 1; k <= NODES; k++)); do
    for d in /sys/fs/cgroup/*/slurm_node"$k"; do
      [[ -d $d ]] || continue
      find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r pid; do
        kill -KILL "$pid" 2>/dev/null || true
      done
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
  done
}

# Stops everything up started. Jobs get a short grace period; in netns mode
# whatever remains in our namespaces is killed, so down never waits for
# UnkillableStepTimeout.
teardown() {
  load_settings || true
  export SLURM_CONF=$STATE/slurm.conf
  local grace=2
  [[ $MODE == netns ]] || grace=15
  vlog "cancelling jobs"
  cancel_jobs "$grace"
  vlog "killing leftovers on the nodes"
  kill_ns_stragglers nodes
  vlog "stopping slurm daemons"
  # Daemons exit within ~1 s of SIGTERM, but slurmd can take 10 s after its steps
  # were killed; nothing of value is lost by SIGKILL then.
  # shellcheck disable=SC2046 # one pid per word
  stop_pids 2 $(slurm_daemon_pids)
  vlog "killing leftovers"
  if [[ $MODE == netns ]]; then kill_ns_stragglers all; else kill_stepd_stragglers; fi
  [[ $PROCTRACK != cgroup ]] || remove_cgroups
  vlog "stopping munged"
  stop_pids 3 "$(daemon_pid munged)"
  vlog "removing network and $STATE"
  remove_network
  rm -rf -- "$STATE"
  vlog "done"
}

cmd_down() {
  [[ $# -eq 0 ]] || die "down takes no options"
  need_root
  if [[ ! -e $STATE ]]; then
    log "not running ($STATE does not exist)"
    return 0
  fi
  state_exists || die "$STATE is not a local-cluster state dir; refusing to touch it"
  teardown
  log "down: stopped and removed $STATE"
}

# ---------------------------------------------------------------- env, status, reload

require_cluster() {
  if ! state_exists || ! load_settings; then
    log "no cluster in $STATE"
    exit 3
  fi
}

cmd_env() {
  [[ $# -eq 0 ]] || die "env takes no options"
  require_cluster
  print_exports
}

print_daemons() {
  local name pid state
  printf '%-14s %-8s %s\n' DAEMON PID STATE
  for name in $(daemon_names); do
    pid=$(daemon_pid "$name")
    state=dead
    ! is_ours "$pid" || state=alive
    printf '%-14s %-8s %s\n' "$name" "$pid" "$state"
  done
}

cmd_status() {
  [[ $# -eq 0 ]] || die "status takes no options"
  require_cluster
  export SLURM_CONF=$STATE/slurm.conf
  printf 'cluster %s: %s mode, %s nodes, proctrack/%s\n' "$STATE" "$MODE" "$NODES" "$PROCTRACK"
  printf 'plugstack: %s\n' "$(cat "$STATE/plugstack.conf" 2>/dev/null || true)"
  print_daemons
  local rc=0
  all_daemons_alive || rc=3
  sinfo -N -o '%N %t %c %P' 2>&1 || rc=3
  return "$rc"
}

cmd_reload_plugin() {
  local want_plugin
  parse_opts "--plugin" "$@"
  want_plugin=$PLUGIN
  need_root
  require_cluster
  [[ -z ${GIVEN[--plugin]:-} ]] || PLUGIN=$want_plugin
  [[ -f $PLUGIN ]] || die "no plugin at $PLUGIN"
  install_local_plugin
  save_settings
}
