#!/usr/bin/env bats
# The Python package dist_train (docs/python.md): `make install` puts it in
# the Python path and it finds the installed library; from a checkout it
# imports from python/ and finds build/'s library. BUILD=build-X runs these
# against another build directory.

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  B=${BUILD:-build}
  DEST="$BATS_TEST_TMPDIR/dest"
  PY=${PYTHON:-python3}
  # What the package loaded: the version and the library's path in the maps.
  PROBE='import dist_train; v = dist_train.version()
print(v, [l.split()[-1] for l in open("/proc/self/maps") if "libdist-train" in l][0])'
}

# py SITE: runs $PROBE with only SITE on the Python path, from an unrelated
# directory, with no DT_LIBRARY.
py() {
  (cd "$BATS_TEST_TMPDIR" && env -u DT_LIBRARY PYTHONPATH="$1" "${@:2}" "$PY" -c "$PROBE")
}

@test "make install DESTDIR=... prefix=/usr: Debian's dist-packages, LIBDIR recorded, the installed library loads" {
  run make -C "$REPO" BUILD="$B" install DESTDIR="$DEST" prefix=/usr
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  site="$DEST/usr/lib/python3/dist-packages"
  [ -f "$site/dist_train/__init__.py" ]
  [ -f "$site/dist_train/checkpoint.py" ]
  [ "$(cat "$site/dist_train/_install.py")" = '# Written by make install: where libdist-train.so.0 was installed.
LIBDIR = "/usr/lib"' ]
  [ ! -e "$REPO/python/dist_train/_install.py" ]  # only ever in the installed copy
  version=$(sed -n 's/^PACKAGE_VERSION = //p' "$REPO/config.mk")
  run py "$site" LD_LIBRARY_PATH="$DEST/usr/lib"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$output" = "$version $DEST/usr/lib/libdist-train.so.0" ]
}

@test "an installed package finds its library through the recorded LIBDIR alone" {
  # Everything under one prefix, no DESTDIR: the real install layout.
  p="$BATS_TEST_TMPDIR/p"
  run make -C "$REPO" BUILD="$B" install prefix="$p" SLURM_PLUGINDIR="$p/slurm" SLURM_SYSCONFDIR="$p/etc"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  run py "$p/lib/python3/dist-packages" env -u LD_LIBRARY_PATH
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *" $p/lib/libdist-train.so.0" ]]
  run make -C "$REPO" BUILD="$B" uninstall prefix="$p" SLURM_PLUGINDIR="$p/slurm" SLURM_SYSCONFDIR="$p/etc"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ ! -e "$p/lib/python3/dist-packages/dist_train" ]
}

@test "python3 -c 'import dist_train' from the build tree finds build/'s library" {
  [ "$B" = build ] || skip "the package looks in build/, these tests run BUILD=$B"
  make -C "$REPO" build/libdist-train.so.0 >/dev/null
  run py "$REPO/python" env -u LD_LIBRARY_PATH
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *" $REPO/build/libdist-train.so.0" ]]
}

@test "import dist_train loads neither the library nor torch nor numpy" {
  run env PYTHONPATH="$REPO/python" DT_LIBRARY=/nonexistent "$PY" -c '
import sys, dist_train, dist_train.preemption, dist_train.checkpoint
from dist_train import _lib
print(sorted(m for m in ("torch", "numpy") if m in sys.modules), _lib.LOAD_COUNT)'
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$output" = "[] 0" ]
}
