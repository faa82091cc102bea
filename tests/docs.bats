#!/usr/bin/env bats
# scripts/check-docs: docs/development.md matches the tree, and a long
# source file says why it is long.

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  COPY="$BATS_TEST_TMPDIR/repo"
  mkdir -p "$COPY"
  # The tree without build outputs.
  rsync -a --exclude /.git --exclude '/build*' --exclude /autom4te.cache "$REPO/" "$COPY/"
}

@test "the tree matches docs/development.md, and every long file says why" {
  run "$REPO/scripts/check-docs" "$REPO"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "docs: development.md matches the tree; every long file says why" ]
}

@test "a component without its row, an unnamed header and a named file that is gone fail it" {
  mkdir "$COPY/lib/triage"
  printf '// x\n' >"$COPY/lib/triage/watchdog.h"
  printf '// x\n' >"$COPY/lib/wiring/extra.h"
  rm "$COPY/lib/wiring/task_relay.h" "$COPY/lib/wiring/task_relay.cc"
  run "$REPO/scripts/check-docs" "$COPY"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"docs/development.md: the Layout table has no row for lib/triage/"* ]]
  [[ $output == *"docs/development.md: the row of lib/wiring/ does not name extra.h"* ]]
  [[ $output == *"docs/development.md: lib/wiring/ names \`task_relay\`, which is no file in lib/wiring/"* ]]
}

@test "a path that is gone, a dead link and a pointer to ../shared/notes fail it" {
  rm -r "$COPY/spank"
  rm "$COPY/docs/style.md"
  echo 'See ../shared/notes/style.md.' >>"$COPY/docs/development.md"
  run "$REPO/scripts/check-docs" "$COPY"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"docs/development.md: the Layout table names spank/, which does not exist"* ]]
  [[ $output == *"docs/development.md: links to style.md, which does not exist"* ]]
  [[ $output == *"docs/development.md: points to ../shared/notes, which is not part of the repository"* ]]
}

@test "a source file over 400 lines without its reason fails it, naming its length" {
  seq 401 | sed 's|^|// |' >"$COPY/lib/base/long.cc"
  run "$REPO/scripts/check-docs" "$COPY"
  [ "$status" -eq 1 ]
  [ "$output" = "lib/base/long.cc: 401 lines; split it, or say why in its first lines (\"over 400 lines: WHY\")" ]
  sed -i '1i // Over 400 lines: a test of the check.' "$COPY/lib/base/long.cc"
  run "$REPO/scripts/check-docs" "$COPY"
  [ "$status" -eq 0 ]
}
