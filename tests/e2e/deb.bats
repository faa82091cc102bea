#!/usr/bin/env bats
# The Debian packages (make deb = scripts/make-deb) for this machine's Slurm
# release: lintian clean, the plugin pinned to this release with an optional
# plugstack conffile, and install -> a 2-node --dist-train job with the
# installed plugin, dt-run, library and Python package -> purge, after which
# nothing of them is left. Installs and removes the packages where it runs
# (root only; scripts/run-tests runs it on the host and in each release's
# root). DT_DEB_DIR: packages make deb built already (else built here).

load common

PKGS=(slurm-spank-dist-train dist-train-tools libdist-train0 libdist-train-dev python3-dist-train)

setup_file() {
  [[ $(id -u) == 0 ]] || skip "installs packages: needs root (CI runs as root)"
  command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage is not installed (scripts/install-deps)"
  local p
  for p in "${PKGS[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
      skip "$p is installed here already: an admin's install is not touched"
    fi
  done
  RELEASE=$(dpkg-query -W -f='${Version}' libslurm-dev | cut -d. -f1,2)
  if [[ -z ${DT_DEB_DIR:-} ]]; then
    DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" "$DT_REPO/scripts/make-deb" >&3
    DT_DEB_DIR=$DT_REPO/build-deb/$RELEASE
  fi
  export RELEASE DT_DEB_DIR
}

teardown() {
  if [[ -n ${RESTORE_PLUGIN:-} ]]; then
    "$DT_REPO/slurm-docker-cluster/local-cluster" reload-plugin --plugin "$DT_REPO/build/spank/spank_dist_train.so"
  fi
  apt-get purge -y -qq "${PKGS[@]}" >/dev/null 2>&1 || true
  cleanup_outdir
}

deb() { ls "$DT_DEB_DIR/$1"_*.deb; }

@test "make deb: the five packages of this Slurm release, lintian clean" {
  for p in "${PKGS[@]}"; do
    [ "$(deb "$p" | wc -l)" -eq 1 ]
    [[ $(dpkg-deb -f "$(deb "$p")" Version) == *"+slurm$RELEASE" ]]
  done
  command -v lintian >/dev/null || skip "lintian is not installed"
  run lintian --fail-on error,warning "$DT_DEB_DIR"/*.changes
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "the plugin package depends on this Slurm release only; its plugstack line is an optional conffile" {
  local next conf
  next=$(awk -F. '{printf "%d.%02d", $1, $2 + 1}' <<<"$RELEASE")
  run dpkg-deb -f "$(deb slurm-spank-dist-train)" Depends
  echo "$output"
  [[ $output == *"slurm-wlm-basic-plugins (>= $RELEASE), slurm-wlm-basic-plugins (<< $next~)"* ]]
  dpkg-deb --info "$(deb slurm-spank-dist-train)" conffiles | grep -qx /etc/slurm/plugstack.conf.d/dist-train.conf
  conf=$(dpkg-deb --fsys-tarfile "$(deb slurm-spank-dist-train)" | tar -xOf - ./etc/slurm/plugstack.conf.d/dist-train.conf)
  [[ $conf =~ ^optional\ /usr/lib/[^/]+/slurm-wlm/spank_dist_train.so$ ]]
}

@test "installed: manual pages for every tool and the plugin, ldconfig knows the library" {
  apt-get install -y -qq "$DT_DEB_DIR"/*.deb >/dev/null
  ldconfig -p | grep -q 'libdist-train.so.0 '
  for page in gen-sbatch.1 dt-run.1 dt-wire.1 dt-topo.1 dt-bench.1 dt-requeue.1 dt-preflight.1 dt-status.1 dt-check-install.1 spank-dist-train.8; do
    f=$(dpkg -L dist-train-tools slurm-spank-dist-train | grep "/man[18]/$page.gz$")
    run bash -c "MANWIDTH=80 man --warnings -l '$f' 2>&1 >/dev/null"
    [ -z "$output" ] || { echo "$page: $output"; false; }
    MANWIDTH=80 man -l "$f" | grep -q "^NAME"
  done
  # every plugstack key the plugin accepts (its ConfigKeys()) is in its page
  page=$(MANWIDTH=200 man -l "$(dpkg -L slurm-spank-dist-train | grep '/spank-dist-train.8.gz$')" | sed 's/^ *//')
  keys=$(sed -n '/^const std::vector<std::string>& ConfigKeys() {/,/^}/p' "$DT_REPO/lib/contract/options.cc" |
    grep -o '"[a-z_]*"' | tr -d '"')
  [ "$(wc -l <<<"$keys")" -ge 15 ]
  for k in $keys; do
    grep -q "^$k=" <<<"$page" || { echo "key $k missing from spank-dist-train(8)"; false; }
  done
}

@test "installed: a 2-node --dist-train job runs with the packaged plugin, dt-run, library and Python package; purge leaves nothing" {
  require_cluster
  local files plugin
  apt-get install -y -qq "$DT_DEB_DIR"/*.deb >/dev/null
  files=$(dpkg -L "${PKGS[@]}" | while read -r f; do if [[ -f $f || -L $f ]]; then echo "$f"; fi; done)
  [ "$(wc -l <<<"$files")" -ge 20 ]  # what purge must remove
  plugin=$(grep '/spank_dist_train.so$' <<<"$files")
  /usr/bin/dt-check-install --plugin "$plugin"
  RESTORE_PLUGIN=1
  "$DT_REPO/slurm-docker-cluster/local-cluster" reload-plugin --plugin "$plugin"
  make_outdir
  write_script job.sh <<'EOS'
#!/bin/bash
srun --dist-train=mode=node,nproc=2 --ntasks-per-node=1 /usr/bin/dt-run -- /usr/bin/python3 -c '
import array, dist_train, dist_train._lib as lib
with dist_train.Communicator() as c:
    b = array.array("d", [c.rank + 1.0])
    c.all_reduce(b)
    print("rank %d of %d: sum %g, %s, %s" % (c.rank, c.size, b[0], dist_train.__file__, lib.loaded_path))
'
EOS
  run_job -N2 job.sh
  cat "$OUT/slurm-$JOB.out"
  [ "$JOB_STATE" = COMPLETED ]
  # dt-run's "[N] " prefix; four distinct ranks, each summed over all four
  [ "$(grep -E "^\[([0-3])\] rank \1 of 4: sum 10, /usr/lib/python3/dist-packages/dist_train/__init__.py, libdist-train.so.0$" \
    "$OUT/slurm-$JOB.out" | sort -u | wc -l)" -eq 4 ]

  apt-get purge -y -qq "${PKGS[@]}" >/dev/null
  left=$(while read -r f; do if [[ -e $f || -L $f ]]; then echo "$f"; fi; done <<<"$files")
  [ -z "$left" ] || { echo "left after purge: $left"; false; }
  [ ! -e /etc/slurm/plugstack.conf.d/dist-train.conf ]
  ! ldconfig -p | grep -q libdist-train
}

@test "upgrade: apt will not put the next Slurm release next to the installed plugin (it removes the plugin, or refuses with --no-remove)" {
  local suite mirror tmp other
  # The next Debian suite's Slurm: an upgrade, as an admin would make it.
  case $RELEASE in
    22.05) suite=trixie ;;
    24.11) suite=sid ;;
    *) skip "no Debian suite after this one's Slurm $RELEASE to upgrade to" ;;
  esac
  apt-get install -y -qq "$DT_DEB_DIR"/*.deb >/dev/null
  tmp=$(mktemp -d)
  mirror=$("$DT_REPO/scripts/slurm-root" mirror)
  mkdir -p "$tmp/lists/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$tmp/sources.list"
  apt_other() {
    apt-get -o Dir::Etc::SourceList="$tmp/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
      -o Dir::State::Lists="$tmp/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= "$@"
  }
  # apt-get update exits 0 also when nothing could be fetched (no network,
  # as in scripts/slurm-root's sessions): the index must be there.
  apt_other -qq update >/dev/null 2>&1 || true
  compgen -G "$tmp/lists/*_Packages*" >/dev/null || { rm -rf "$tmp"; skip "$mirror ($suite) is unreachable from here"; }
  other=$(apt_other -qq -s install slurm-wlm-basic-plugins/$suite 2>&1 | sed -n 's/^Inst slurm-wlm-basic-plugins \[[^]]*\] (\([^ ]*\) .*/\1/p')
  echo "Slurm in $suite: ${other:-?}"
  [[ -n $other && $other != "$RELEASE".* ]]
  # Asked to keep the plugin: the pin is the unmet dependency.
  run apt_other -s install "slurm-wlm-basic-plugins=$other" slurm-spank-dist-train
  echo "$output"
  [ "$status" -ne 0 ]
  [[ $output == *"slurm-spank-dist-train : Depends: slurm-wlm-basic-plugins (< "* ]]
  # Otherwise apt removes the plugin first, or refuses with --no-remove.
  run apt_other -s install "slurm-wlm-basic-plugins=$other"
  grep -q '^Remv slurm-spank-dist-train ' <<<"$output"
  run apt_other -s --no-remove install "slurm-wlm-basic-plugins=$other"
  [ "$status" -ne 0 ]
  [[ $output == *"Packages need to be removed but remove is disabled."* ]]
  rm -rf "$tmp"
}
