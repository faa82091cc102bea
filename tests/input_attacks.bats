#!/usr/bin/env bats
# Hostile input to dt-topo (no Slurm needed): topology XML that crashes
# hwloc 2.9, and index-list size bombs. The plugin's own parsers are
# attacked in the unit tests (lib/base/hostlist_test.cc,
# lib/binding/topology_test.cc, spank/stepd_test.cc).

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  TOPO="$REPO/${DT_BUILD_DIR:-build}/tools/dt-topo"
  FIXTURE="$REPO/tests/fixtures/two-gpus-per-switch.xml"
}

# crashes NAME SIGNAL XML: where hwloc dies of SIGNAL on the file (2.9;
# 2.12 and 2.15 refuse most of these), dt-topo says so and exits 1 instead
# of dying itself; elsewhere it exits 1 with hwloc's own reason.
crashes() {
  local f="$BATS_TEST_TMPDIR/$1.xml"
  printf '%s' "$3" >"$f"
  run "$TOPO" --topology "$f"
  echo "$output"
  [ "$status" -eq 1 ]
  # hwloc 2.15's libxml reader may print a line of its own first
  local last=${lines[${#lines[@]}-1]}
  [ "$last" = "dt-topo: hwloc crashed parsing $f (signal $2)" ] ||
    [ "$last" = "dt-topo: hwloc crashed parsing $f (its parser exited with status 1)" ] ||
    [[ $last == "dt-topo: $f: "* ]]
  if hwloc_is_2_9; then
    [ "$output" = "dt-topo: hwloc crashed parsing $f (signal $2)" ]
  fi
}

# The release these inputs were found on, with hwloc's own XML reader:
# there each one must crash hwloc. (libhwloc-plugins, which Open MPI's
# packages pull in, adds a libxml2 reader that hwloc prefers and that fails
# differently: the 15-byte file crashes it, the others it refuses.)
hwloc_is_2_9() {
  [[ $(dpkg-query -W -f '${Version}' libhwloc15 2>/dev/null) == 2.9.* ]] &&
    ! dpkg-query -W -f '${Status}' libhwloc-plugins 2>/dev/null | grep -q 'install ok installed'
}

@test "a set starting with a comma (hwloc asserts) is an error, not an abort" {
  crashes leading-comma "6, Aborted" '<topology><object complete_nodeset=",0x1"/>'
}

@test "an untyped object after a PU (hwloc segfaults) is an error, not a crash" {
  crashes untyped-after-pu "11, Segmentation fault" \
    '<topology version="2.0"><object cpuset="0xff"><object type="PU" cpuset="0x2"/><object/></object>'
}

@test "a PU with an empty cpuset beside another (hwloc segfaults) is an error" {
  crashes empty-pu-cpuset "11, Segmentation fault" \
    '<topology version="2.0"><object type="Machine" cpuset="0xff" complete_cpuset="0xff" nodeset="0x3" complete_nodeset="0x3" allowed_cpuset="0xf7" allowed_nodeset="0x3"><object type="PU" os_index="2" cpuset=""/><object type="PU" os_index="6" cpuset="0x40"/></object>'
}

@test "a Package at the root holding a NUMA node (hwloc segfaults) is an error" {
  crashes package-at-the-root "11, Segmentation fault" \
    '<topology version="2.0"><object type="Package" cpuset="0xcc" complete_cpuset="0xcc" nodeset="0x2" complete_nodeset="0x2"><object type="NUMANode" os_index="1" cpuset="0xcc" complete_cpuset="0xcc" nodeset="0xe"/></object></topology>'
}

@test "the 15-byte DOCTYPE file is refused, never a crash of dt-topo" {
  f="$BATS_TEST_TMPDIR/doctype.xml"
  printf '<!DOCTYPEl><t/>' >"$f"
  run "$TOPO" --topology "$f"
  echo "$output"
  [ "$status" -eq 1 ]
  # hwloc 2.12 crashes on it (as the issue saw), 2.9 and 2.15 refuse it
  local last=${lines[${#lines[@]}-1]}  # after hwloc 2.15's own line
  [[ $last == "dt-topo: $f: "* ]] || [[ $last == "dt-topo: hwloc crashed parsing $f ("* ]]
  if hwloc_is_2_9; then
    [ "$output" = "dt-topo: $f: hwloc cannot load the topology: Invalid argument" ]
  fi
}

@test "a good file still gives the plan" {
  run "$TOPO" --topology "$FIXTURE"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == rank* ]]
}

@test "an index-list bomb in --gpus is refused at once, naming the cap" {
  # 100 x "0-1048576": 17-40 s and 514 MiB before the cap.
  bomb=$(printf '0-1048576,%.0s' $(seq 99))0-1048576
  start=$(date +%s%N)
  run "$TOPO" --topology "$FIXTURE" --gpus "$bomb"
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  [ "$status" -eq 1 ]
  [ "$output" = "dt-topo: --gpus='${bomb:0:64}... (999 bytes)': more than 65536 indices (the cap)" ]
  [ "$elapsed_ms" -lt 5000 ]
}
