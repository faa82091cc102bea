#!/usr/bin/env bats
# gen-sbatch without a cluster: golden scripts for every template and option
# family, each passing bash -n and shellcheck; CLI behaviour and exit codes.

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  GEN="$REPO/build/tools/gen-sbatch"
  CASES="$REPO/tests/gen-sbatch"
  cd "$CASES"
}

@test "every config renders exactly its golden script" {
  for yaml in *.yaml; do
    run "$GEN" "$yaml"
    [ "$status" -eq 0 ] || { echo "$yaml: $output"; false; }
    diff -u "${yaml%.yaml}.sbatch" <(printf '%s\n' "$output") || { echo "golden mismatch: $yaml"; false; }
  done
}

@test "every golden script passes bash -n and shellcheck, #SBATCH lines first" {
  for script in *.sbatch; do
    bash -n "$script"
    shellcheck "$script"
    first_cmd=$(grep -nvE '^\s*(#|$)' "$script" | head -1 | cut -d: -f1)
    last_sbatch=$(grep -n '^#SBATCH' "$script" | tail -1 | cut -d: -f1)
    [ "$last_sbatch" -lt "$first_cmd" ]
  done
}

@test "quoted values reach the program as single, unchanged words" {
  script=$("$GEN" quoting.yaml)
  # Run the script's last command with a stand-in srun that prints its argv.
  stub="$BATS_TEST_TMPDIR/bin"
  mkdir -p "$stub"
  printf '#!/bin/bash\nfor a in "$@"; do printf "<%%s>\\n" "$a"; done\nprintf "SUBST=<%%s>\\n" "$SUBST"\n' >"$stub/srun"
  chmod +x "$stub/srun"
  run env PATH="$stub:$PATH" bash -c "$script"
  [ "$status" -eq 0 ]
  expected=$'<python3>\n<train file.py>\n<it\'s>\n<$(rm -rf ~)>\n<`id`>\n<a\nb>\n<*>\n<>\nSUBST=<$(whoami) `id` ${HOME}>'
  [ "$output" = "$expected" ]
}

@test "--set overrides keys; --list-sweep prints the points" {
  run "$GEN" torchrun.yaml --set job.nodes=8 --set 'env.MSG=hi there'
  [ "$status" -eq 0 ]
  [[ "$output" == *"#SBATCH --nodes=8"* ]]
  [[ "$output" == *"export MSG='hi there'"* ]]
  run "$GEN" sweep-grid.yaml --list-sweep
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "index  lr     batch" ]
  [ "${lines[12]}" = "11     0.001  256" ]
  [ "${#lines[@]}" -eq 13 ]
}

@test "a sweep larger than MaxArraySize is split into several arrays, not truncated" {
  run "$GEN" sweep-grid.yaml --set sweep.max_array_size=5
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: the sweep has 12 points, more than MaxArraySize 5: it needs 3 job arrays; use -o FILE (writes FILE, FILE.1, ...) or --submit" ]
  run "$GEN" sweep-grid.yaml --set sweep.max_array_size=5 -o "$BATS_TEST_TMPDIR/s.sh"
  [ "$status" -eq 0 ]
  grep -q '^#SBATCH --array=0-4%4$' "$BATS_TEST_TMPDIR/s.sh"
  grep -q '^#SBATCH --array=0-4%4$' "$BATS_TEST_TMPDIR/s.sh.1"
  grep -q '^#SBATCH --array=0-1%4$' "$BATS_TEST_TMPDIR/s.sh.2"
  grep -q '^dt_point=\$((10 + ' "$BATS_TEST_TMPDIR/s.sh.2"
  grep -q "^  11) export lr=0.001 batch=256" "$BATS_TEST_TMPDIR/s.sh.2"
  [ ! -e "$BATS_TEST_TMPDIR/s.sh.3" ]
  for f in "$BATS_TEST_TMPDIR"/s.sh*; do shellcheck "$f"; done
}

@test "exit codes: 0 ok, 1 error with file:line:col, 2 usage" {
  run "$GEN" custom.yaml
  [ "$status" -eq 0 ]
  printf 'job:\n  nodse: 2\n' >"$BATS_TEST_TMPDIR/bad.yaml"
  run "$GEN" "$BATS_TEST_TMPDIR/bad.yaml"
  [ "$status" -eq 1 ]
  [[ "$output" == "gen-sbatch: $BATS_TEST_TMPDIR/bad.yaml:2:3: job: unknown key 'nodse' (did you mean 'nodes'?)"* ]]
  run "$GEN"
  [ "$status" -eq 2 ]
  run "$GEN" custom.yaml --no-such-flag
  [ "$status" -eq 2 ]
}

@test "--template: a user template, and an unknown placeholder is named" {
  printf '#!/bin/bash\n{{sbatch}}\necho {{command}}\n' >"$BATS_TEST_TMPDIR/t.sbatch"
  run "$GEN" torchrun.yaml --template "$BATS_TEST_TMPDIR/t.sbatch"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "echo train.py --epochs 3" ]
  printf '#!/bin/bash\n{{sbatch}}\n{{comand}} {{command}}\n' >"$BATS_TEST_TMPDIR/u.sbatch"
  run "$GEN" torchrun.yaml --template "$BATS_TEST_TMPDIR/u.sbatch"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/u.sbatch:3: unknown placeholder '{{comand}}'; valid: header, sbatch, setup, env, run, srun_options, command" ]
  printf '#!/bin/bash\n{{sbatch}}\n{{command}}\n' >"$BATS_TEST_TMPDIR/w.sbatch"
  run "$GEN" sweep-grid.yaml --template "$BATS_TEST_TMPDIR/w.sbatch"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/w.sbatch: the template lacks {{run}}" ]
  printf '#!/bin/bash\necho hi\n{{sbatch}}\n{{command}}\n' >"$BATS_TEST_TMPDIR/v.sbatch"
  run "$GEN" torchrun.yaml --template "$BATS_TEST_TMPDIR/v.sbatch"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/v.sbatch:2: a command comes before the #SBATCH lines (sbatch would ignore them)" ]
}
