#!/usr/bin/env bats
# The build's products: `make install` honours DESTDIR, the plugin exports
# only SPANK entry points, and a program builds against the installed
# library through pkg-config. BUILD=build-x bats tests/install.bats uses
# (and builds) that build directory instead of build/.

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  BUILD=${BUILD:-build}
  export BUILD # make takes it from the environment
  DEST="$BATS_TEST_TMPDIR/dest"
  PLUGINDIR=$(sed -n 's/^SLURM_PLUGINDIR = //p' "$REPO/config.mk")
  SLURMCONF=$(sed -n 's/^SLURM_SYSCONFDIR = //p' "$REPO/config.mk")
  PREFIX=$(sed -n 's/^prefix = //p' "$REPO/config.mk")
  LIBDIR=$PREFIX/lib
}

@test "make install DESTDIR=... puts every product in place" {
  run make -C "$REPO" install DESTDIR="$DEST"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ -x "$DEST$PLUGINDIR/spank_dist_train.so" ]
  [ ! -e "$DEST$PLUGINDIR/spank_dist_train.so.new" ]
  [ "$SLURMCONF" = /etc/slurm ]
  [ "$(cat "$DEST/etc/slurm/plugstack.conf.d/dist-train.conf")" = "required $PLUGINDIR/spank_dist_train.so" ]
  [ -x "$DEST$PREFIX/bin/dt-topo" ]
  [ -x "$DEST$PREFIX/bin/gen-sbatch" ]
  [ -x "$DEST$PREFIX/bin/dt-run" ]
  [ -x "$DEST$PREFIX/bin/dt-requeue" ]
  [ -x "$DEST$PREFIX/bin/dt-check-install" ]
  [ -f "$DEST$PREFIX/include/dist_train/preemption.h" ]
  [ -f "$DEST$PREFIX/share/dist-train/templates/torchrun.sbatch" ]
  [ -f "$DEST$PREFIX/include/dist_train/status.h" ]
  [ -f "$DEST$LIBDIR/libdist-train.a" ]
  [ -L "$DEST$LIBDIR/libdist-train.so" ]
  [ -f "$DEST$LIBDIR/libdist-train.so.0" ]
  grep -q '^Libs: -L${libdir} -ldist-train$' "$DEST$LIBDIR/pkgconfig/dist-train.pc"
  [ -f "$DEST$PREFIX/share/doc/dist-train/env-contract.md" ]
  for t in dt-topo gen-sbatch dt-run dt-bench dt-requeue dt-wire dt-preflight dt-status dt-check-install; do
    [ -s "$DEST$PREFIX/share/man/man1/$t.1" ]
  done
  [ -s "$DEST$PREFIX/share/man/man8/spank-dist-train.8" ]
}

@test "make install PLUGSTACK_MODE=optional writes the packages' plugstack line" {
  run make -C "$REPO" install DESTDIR="$DEST" PLUGSTACK_MODE=optional
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(cat "$DEST/etc/slurm/plugstack.conf.d/dist-train.conf")" = "optional $PLUGINDIR/spank_dist_train.so" ]
  run make -C "$REPO" install DESTDIR="$DEST"
  [ "$(cat "$DEST/etc/slurm/plugstack.conf.d/dist-train.conf")" = "required $PLUGINDIR/spank_dist_train.so" ]
}

@test "manual pages come from --help: every option a tool's --help names is in its page, which man renders without a warning" {
  run make -C "$REPO" man
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  for t in dt-topo gen-sbatch dt-run dt-bench dt-requeue dt-wire dt-preflight dt-status dt-check-install; do
    page="$REPO/$BUILD/man/$t.1"
    run bash -c "MANWIDTH=80 man --warnings -l '$page' 2>&1 >/dev/null"
    [ -z "$output" ] || { echo "$t: $output"; false; }
    text=$(MANWIDTH=200 man -l "$page" 2>/dev/null)
    [[ $(sed -n 2p <<<"$(grep -A1 '^NAME' <<<"$text")") == *"$t - "* ]]
    opts=$(PATH="$REPO/$BUILD/tools:$REPO/tools:$PATH" "$t" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u)
    [ -n "$opts" ]
    for o in $opts; do
      grep -qF -- "$o" <<<"$text" || { echo "$t: $o is in --help but not in $t(1)"; false; }
    done
  done
}

@test "make install prefix=... (at make time) reaches the pkg-config file" {
  run make -C "$REPO" install DESTDIR="$DEST" prefix=/opt/dt
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  grep -qx 'prefix=/opt/dt' "$DEST/opt/dt/lib/pkgconfig/dist-train.pc"
  [ -f "$DEST/opt/dt/include/dist_train/status.h" ]
  [ -x "$DEST/opt/dt/bin/dt-topo" ]
}

@test "make installcheck: the installed plugin is for this node's Slurm release; another one is a MISMATCH" {
  run make -C "$REPO" install installcheck DESTDIR="$DEST"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  version=$(sed -n 's/^SLURM_VERSION = //p' "$REPO/config.mk")
  [[ $output == *"built for Slurm $version: matches slurmd ${version%.*}"* ]]
  # The same plugin marked for another release (what an admin has after an
  # upgrade of Slurm without a rebuild), named in a plugstack.conf include.
  other=21.08.8
  mkdir -p "$BATS_TEST_TMPDIR/conf.d" "$BATS_TEST_TMPDIR/old"
  [[ ${version%.*} != 21.08 ]]
  sed "s/dist-train-built-for-slurm=$version/dist-train-built-for-slurm=$other/" \
    "$REPO/$BUILD/spank/spank_dist_train.so" >"$BATS_TEST_TMPDIR/old/spank_dist_train.so"
  echo "include $BATS_TEST_TMPDIR/conf.d/*.conf" >"$BATS_TEST_TMPDIR/plugstack.conf"
  echo "required $BATS_TEST_TMPDIR/old/spank_dist_train.so  # after the upgrade" >"$BATS_TEST_TMPDIR/conf.d/dist-train.conf"
  run "$DEST$PREFIX/bin/dt-check-install" --plugstack "$BATS_TEST_TMPDIR/plugstack.conf"
  [ "$status" -eq 1 ]
  [[ $output == *"old/spank_dist_train.so (required): built for Slurm $other, but slurmd is ${version%.*}: MISMATCH"* ]]
  [[ $output == *"every srun and sbatch fails (also without --dist-train) and slurmd does not start"* ]]
}

@test "make uninstall removes every file make install put in place" {
  run make -C "$REPO" install DESTDIR="$DEST"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(find "$DEST" -type f -o -type l | wc -l)" -gt 20 ]
  run make -C "$REPO" uninstall DESTDIR="$DEST"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  run find "$DEST" -type f -o -type l
  [ "$output" = "" ]
}

@test "CPPFLAGS, CXXFLAGS and LDFLAGS from make's environment and command line reach every compile and link" {
  # -W (what if this source changed), not -B: GNU make remakes included
  # makefiles even under -n, so -B would rewrite config.mk and the next
  # make would rebuild everything (4 min per release in CI).
  run env CPPFLAGS=-DDT_FROM_ENV CXXFLAGS=-fno-plt LDFLAGS=-Wl,-O1 \
    make -C "$REPO" -n -W tools/dt_topo.cc -W spank/plugin.cc \
    "$BUILD/tools/dt_topo.o" "$BUILD/tools/dt-topo" "$BUILD/spank/spank_dist_train.so"
  [ "$status" -eq 0 ]
  [ "$(grep -c -- '-DDT_FROM_ENV' <<<"$output")" -ge 2 ]
  [ "$(grep -c -- '-fno-plt' <<<"$output")" -ge 2 ]
  [ "$(grep -c -- '-Wl,-O1' <<<"$output")" -ge 2 ]
  [ "$REPO/config.mk" -ot "$REPO/$BUILD/tools/dt-topo" ] || [ ! -e "$REPO/$BUILD/tools/dt-topo" ] ||
    { echo "config.mk was rewritten: the next make rebuilds everything"; false; }
  run make -C "$REPO" -n -W tools/dt_topo.cc CPPFLAGS=-DDT_FROM_LINE "$BUILD/tools/dt_topo.o"
  [[ $output == *-DDT_FROM_LINE* ]]
}

@test "the plugin exports only the SPANK entry points and plugin symbols" {
  run nm -D --defined-only "$REPO/$BUILD/spank/spank_dist_train.so"
  [ "$status" -eq 0 ]
  names=$(awk '{print $3}' <<<"$output" | sort | tr '\n' ' ')
  [ "$names" = "plugin_name plugin_type plugin_version slurm_spank_exit slurm_spank_init slurm_spank_init_post_opt slurm_spank_local_user_init slurm_spank_slurmd_exit slurm_spank_task_init slurm_spank_user_init spank_plugin_version " ]
}

@test "the plugin stays lean: no iostreams or locales, no float-to-text tables, text under 1 MB" {
  # It links libstdc++ statically and every slurmstepd maps it: one
  # ifstream brought in the whole locale (text 0.71 -> 1.53 MB, 2026-12-07),
  # std::to_chars/from_chars their tables (another 0.23 MB).
  so="$REPO/$BUILD/spank/spank_dist_train.so"
  run bash -c "nm -C '$so' | grep -E 'std::(locale|basic_ios|ios_base)|ryu::|fast_float::' | head -5"
  [ "$status" -eq 0 ]
  [ -z "$output" ] || { echo "pulled into the plugin: $output"; false; }
  text=$(size -A "$so" | awk '$1 == ".text" {print $2}')
  [ "$text" -lt 1048576 ] || { echo "plugin .text is $text bytes"; false; }
}

@test "a program builds and runs against the installed library via pkg-config" {
  make -C "$REPO" install DESTDIR="$DEST" >/dev/null
  cat >"$BATS_TEST_TMPDIR/use.cc" <<'EOS'
#include <dist_train/status.h>
#include <cstdio>
int main() {
  dist_train::Status s = dist_train::Status::NotFound("RANK is not set");
  std::printf("%s\n", s.ToString().c_str());
  return s.ok() ? 1 : 0;
}
EOS
  pc="$DEST$LIBDIR/pkgconfig"
  flags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config --cflags --libs dist-train)
  g++ -std=c++17 "$BATS_TEST_TMPDIR/use.cc" -o "$BATS_TEST_TMPDIR/use" $flags
  run env LD_LIBRARY_PATH="$DEST$LIBDIR" "$BATS_TEST_TMPDIR/use"
  [ "$status" -eq 0 ]
  [ "$output" = "Not found: RANK is not set" ]
  # A training program gets the runtime, not the plugin's dependencies.
  run env LD_LIBRARY_PATH="$DEST$LIBDIR" ldd "$BATS_TEST_TMPDIR/use"
  [[ $output == *libdist-train.so.0* ]]
  [[ $output != *hwloc* && $output != *yaml* ]]
  run ldd "$REPO/$BUILD/examples/train_linear"
  [[ $output != *hwloc* && $output != *yaml* ]]
}

@test "libdist-train.so exports the public API of include/dist_train/ and nothing else" {
  make -C "$REPO" install DESTDIR="$DEST" >/dev/null
  run bash -c "nm -D --defined-only '$DEST$LIBDIR/libdist-train.so.0' | c++filt | cut -d' ' -f3- | sed 's/(.*//; s/\[abi:cxx11\]//' | sort -u"
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -ge 15 ]
  local sym name exported_c=()
  for sym in "${lines[@]}"; do
    if [[ $sym =~ ^dt_[a-z0-9_]+$ ]]; then # the C API
      exported_c+=("$sym")
      continue
    fi
    [[ $sym == dist_train::* ]] || { echo "not ours: $sym"; false; }
    name=${sym#dist_train::}
    name=${name%%::*}  # the function, or the class of a member
    grep -qw -- "$name" "$REPO"/include/dist_train/*.h || { echo "not public: $sym"; false; }
  done
  # ... and the internals a program could otherwise call are hidden.
  # (`! cmd` fails a bats test only as its last command.)
  if grep 'ParseJobOptions\|PlanTaskEnv\|ParseUint' <<<"$output"; then false; fi
  # Exactly the functions dist_train.h declares are exported with C names.
  declared=$(grep -oE '^DT_C_EXPORT [^(]*[^a-z0-9_]dt_[a-z0-9_]+\(' "$REPO/include/dist_train/dist_train.h" |
    grep -oE 'dt_[a-z0-9_]+\($' | tr -d '(' | sort)
  [ "$(wc -l <<<"$declared")" -ge 30 ]
  diff <(echo "$declared") <(printf '%s\n' "${exported_c[@]}") || { echo "dt_* exported != declared in dist_train.h"; false; }
}

@test "a C99 program builds with -pedantic -Werror against the installed C API and runs" {
  make -C "$REPO" install DESTDIR="$DEST" >/dev/null
  pc="$DEST$LIBDIR/pkgconfig"
  flags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config --cflags --libs dist-train)
  run cc -std=c99 -Wall -Wextra -Werror -pedantic "$REPO/tests/capi_smoke.c" -o "$BATS_TEST_TMPDIR/smoke" $flags
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # One rank, wired through the environment alone (nothing of Slurm's).
  port=$((20000 + RANDOM % 10000))
  run env -i LD_LIBRARY_PATH="$DEST$LIBDIR" RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$port DT_TIMEOUT=20 "$BATS_TEST_TMPDIR/smoke"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == "api 3, rank 0 of 1, "*", sum 3, stop 1, error 'dt_comm_all_reduce: dtype 42 is not a dt_dtype (0 to 5)'" ]] ||
    { echo "$output"; false; }
}
