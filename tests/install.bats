#!/usr/bin/env bats
# The build's products: `make install` honours DESTDIR, the plugin exports
# only SPANK entry points, and a program builds against the installed
# library through pkg-config.

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
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
  [ -f "$DEST$PREFIX/include/dist_train/preemption.h" ]
  [ -f "$DEST$PREFIX/share/dist-train/templates/torchrun.sbatch" ]
  [ -f "$DEST$PREFIX/include/dist_train/status.h" ]
  [ -f "$DEST$LIBDIR/libdist-train.a" ]
  [ -L "$DEST$LIBDIR/libdist-train.so" ]
  [ -f "$DEST$LIBDIR/libdist-train.so.0" ]
  grep -q '^Libs: -L${libdir} -ldist-train$' "$DEST$LIBDIR/pkgconfig/dist-train.pc"
  [ -f "$DEST$PREFIX/share/doc/dist-train/env-contract.md" ]
}

@test "make install prefix=... (at make time) reaches the pkg-config file" {
  run make -C "$REPO" install DESTDIR="$DEST" prefix=/opt/dt
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  grep -qx 'prefix=/opt/dt' "$DEST/opt/dt/lib/pkgconfig/dist-train.pc"
  [ -f "$DEST/opt/dt/include/dist_train/status.h" ]
  [ -x "$DEST/opt/dt/bin/dt-topo" ]
}

@test "the plugin exports only the SPANK entry points and plugin symbols" {
  run nm -D --defined-only "$REPO/build/spank/spank_dist_train.so"
  [ "$status" -eq 0 ]
  names=$(awk '{print $3}' <<<"$output" | sort | tr '\n' ' ')
  [ "$names" = "plugin_name plugin_type plugin_version slurm_spank_exit slurm_spank_init slurm_spank_init_post_opt slurm_spank_slurmd_exit slurm_spank_task_init slurm_spank_user_init spank_plugin_version " ]
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
}
