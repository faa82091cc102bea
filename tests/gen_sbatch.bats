#!/usr/bin/env bats
# gen-sbatch without a cluster: golden scripts for every template and option
# family, each passing bash -n and shellcheck; CLI behaviour and exit codes;
# hostile input (issue #12). DT_TEST_BUILD names the build directory.

bats_require_minimum_version 1.5.0

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  GEN="${DT_TEST_BUILD:-$REPO/build}/tools/gen-sbatch"
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

@test "a random sweep without a seed draws one, says it and records it; that seed repeats the points" {
  printf 'launch: {command: [./train]}\nsweep:\n  random:\n    samples: 4\n    params: {lr: {uniform: [0, 1]}}\n' >"$BATS_TEST_TMPDIR/r.yaml"
  run --separate-stderr "$GEN" "$BATS_TEST_TMPDIR/r.yaml" -o "$BATS_TEST_TMPDIR/r.sbatch"
  [ "$status" -eq 0 ]
  echo "$stderr"
  [[ $stderr =~ ^gen-sbatch:\ sweep.random.seed\ not\ given:\ drew\ ([0-9]+)\ \(the\ script\ records\ it\;\ add\ seed:\ ([0-9]+)\ to ]]
  seed=${BASH_REMATCH[1]}
  [ "${BASH_REMATCH[2]}" = "$seed" ]
  grep -qx "# Sweep: 4 points (random, seed $seed); array task i runs point 0 + i." "$BATS_TEST_TMPDIR/r.sbatch"
  run --separate-stderr "$GEN" "$BATS_TEST_TMPDIR/r.yaml" --set "sweep.random.seed=$seed" -o "$BATS_TEST_TMPDIR/again.sbatch"
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  diff "$BATS_TEST_TMPDIR/r.sbatch" "$BATS_TEST_TMPDIR/again.sbatch"
  # a second draw is (almost surely) another seed, with other points
  run --separate-stderr "$GEN" "$BATS_TEST_TMPDIR/r.yaml" --list-sweep
  [[ $stderr == *"drew "* ]] && [[ $stderr != *"drew $seed "* ]]
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
  # every error of the file at once, one line each
  printf 'job:\n  nodse: 2\n  time: soon\nlaunh: {}\n' >"$BATS_TEST_TMPDIR/bad3.yaml"
  run "$GEN" "$BATS_TEST_TMPDIR/bad3.yaml"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 3 ]
  [[ ${lines[0]} == "gen-sbatch: $BATS_TEST_TMPDIR/bad3.yaml:2:3: job: unknown key 'nodse'"* ]]
  [[ ${lines[1]} == "gen-sbatch: $BATS_TEST_TMPDIR/bad3.yaml:3:9: job.time: 'soon' is not a Slurm time"* ]]
  [[ ${lines[2]} == "gen-sbatch: $BATS_TEST_TMPDIR/bad3.yaml:4:1: top level: unknown key 'launh' (did you mean 'launch'?)"* ]]
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
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/u.sbatch:3: unknown placeholder '{{comand}}'; valid: header, sbatch, setup, env, run, srun_options, wire, launcher, command" ]
  printf '#!/bin/bash\n{{sbatch}}\n{{command}}\n' >"$BATS_TEST_TMPDIR/w.sbatch"
  run "$GEN" sweep-grid.yaml --template "$BATS_TEST_TMPDIR/w.sbatch"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/w.sbatch: the template lacks {{run}}" ]
  printf '#!/bin/bash\necho hi\n{{sbatch}}\n{{command}}\n' >"$BATS_TEST_TMPDIR/v.sbatch"
  run "$GEN" torchrun.yaml --template "$BATS_TEST_TMPDIR/v.sbatch"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/v.sbatch:2: a command comes before the #SBATCH lines (sbatch would ignore them)" ]
}

# ---- hostile input (issue #12): errors, never a hang, a crash or all memory.
# Each runs under a memory ulimit and a timeout far above what it needs.

# Runs gen-sbatch with at most 1 GB of address space and 60 s.
bounded() {
  run bash -c 'ulimit -v 1000000; exec timeout 60 "$@"' bounded "$GEN" "$@"
}

@test "hostile YAML: ',a:' (yaml-cpp 0.7 loops on it), deep nesting and alias bombs are errors" {
  printf ',a:' >"$BATS_TEST_TMPDIR/comma.yaml"
  bounded "$BATS_TEST_TMPDIR/comma.yaml"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == "gen-sbatch: $BATS_TEST_TMPDIR/comma.yaml:"* ]]
  # yaml-cpp 0.7 (Debian 12) loops; newer releases report it their own way
  if [[ $(dpkg-query -W -f '${Version}' libyaml-cpp0.7 2>/dev/null) == 0.7.* ]]; then
    [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/comma.yaml:1:1: YAML syntax error: unexpected ','" ]
  fi
  head -c 100000 /dev/zero | tr '\0' '[' >"$BATS_TEST_TMPDIR/deep.yaml"
  bounded "$BATS_TEST_TMPDIR/deep.yaml"
  [ "$status" -eq 1 ]
  [[ "$output" == "gen-sbatch: $BATS_TEST_TMPDIR/deep.yaml:1:"*": YAML nested too deeply ("* ]]
  {
    echo 'l0: &l0 [lol]'
    for i in 1 2 3 4 5 6 7 8 9; do
      echo "l$i: &l$i [*l$((i - 1)), *l$((i - 1)), *l$((i - 1)), *l$((i - 1)), *l$((i - 1)), *l$((i - 1)), *l$((i - 1)), *l$((i - 1)), *l$((i - 1)), *l$((i - 1))]"
    done
    echo 'launch: {command: *l9}'
  } >"$BATS_TEST_TMPDIR/laughs.yaml"
  bounded "$BATS_TEST_TMPDIR/laughs.yaml"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/laughs.yaml: with its aliases expanded the YAML document holds more than 1000000 values or 4194304 bytes of text" ]
}

@test "inputs over 1 MiB are refused naming the file and the cap" {
  { echo 'launch: {command: [a]}'; printf '# %01048576d\n' 0; } >"$BATS_TEST_TMPDIR/big.yaml"
  bounded "$BATS_TEST_TMPDIR/big.yaml"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/big.yaml: larger than the 1048576-byte limit for a gen-sbatch input" ]
  bounded /dev/zero
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: /dev/zero: larger than the 1048576-byte limit for a gen-sbatch input" ]
  bounded torchrun.yaml --template /dev/zero
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: /dev/zero: larger than the 1048576-byte limit for a gen-sbatch input" ]
}

@test "a sweep over 100000 points is refused with its count; 100000 render within bounds" {
  cat >"$BATS_TEST_TMPDIR/huge.yaml" <<'YAML'
launch: {command: [python3, train.py]}
sweep:
  range: {a: {start: 0, stop: 1000}, b: {start: 0, stop: 100}, c: {start: 0, stop: 100}}
YAML
  bounded "$BATS_TEST_TMPDIR/huge.yaml" -o "$BATS_TEST_TMPDIR/huge.sh"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: sweep has 10000000 points; the limit is 100000" ]
  [ ! -e "$BATS_TEST_TMPDIR/huge.sh" ]
  cat >"$BATS_TEST_TMPDIR/max.yaml" <<'YAML'
launch: {command: [python3, train.py]}
sweep:
  range: {a: {start: 0, stop: 1000}, b: {start: 0, stop: 100}}
  pass_as: both
YAML
  mkdir "$BATS_TEST_TMPDIR/max"
  bounded "$BATS_TEST_TMPDIR/max.yaml" -o "$BATS_TEST_TMPDIR/max/s.sh"
  [ "$status" -eq 0 ]
  [ "$(find "$BATS_TEST_TMPDIR/max" -type f | wc -l)" -eq 100 ]
  grep -q '^  99999) export a=999 b=99; dt_args=(--a=999 --b=99); dt_params='"'"'{"a":999,"b":99}'"'"' ;;$' "$BATS_TEST_TMPDIR/max/s.sh.99"
  for f in "$BATS_TEST_TMPDIR"/max/*; do bash -n "$f"; done
  bounded "$BATS_TEST_TMPDIR/max.yaml" -o "$BATS_TEST_TMPDIR/max/s.sh" --set sweep.max_array_size=99
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: the sweep has 100000 points: with MaxArraySize 99 it needs 1011 job arrays; the limit is 1000" ]
}

@test "a sweep value holding {value} is inserted once, literally" {
  cat >"$BATS_TEST_TMPDIR/loop.yaml" <<'YAML'
launch: {command: [python3, train.py]}
sweep:
  grid: {lr: ['{value}', 'x{value}{name}']}
  pass_as: both
YAML
  bounded "$BATS_TEST_TMPDIR/loop.yaml"
  [ "$status" -eq 0 ]
  [[ "$output" == *"  0) export lr='{value}'; dt_args=('--lr={value}'); dt_params='{\"lr\":\"{value}\"}' ;;"* ]]
  [[ "$output" == *"  1) export lr='x{value}{name}'; dt_args=('--lr=x{value}{name}'); dt_params='{\"lr\":\"x{value}{name}\"}' ;;"* ]]
  bash -n <<<"$output"
}

@test "a custom command's first word NAME=value runs as a program, never as an assignment" {
  cat >"$BATS_TEST_TMPDIR/ld.yaml" <<'YAML'
launch: {style: custom, command: [LD_PRELOAD=/nonexistent.so, echo, ran]}
YAML
  bounded "$BATS_TEST_TMPDIR/ld.yaml" -o "$BATS_TEST_TMPDIR/ld.sh"
  [ "$status" -eq 0 ]
  [ "$(tail -1 "$BATS_TEST_TMPDIR/ld.sh")" = "'LD_PRELOAD=/nonexistent.so' echo ran" ]
  bash -n "$BATS_TEST_TMPDIR/ld.sh"
  run -127 bash "$BATS_TEST_TMPDIR/ld.sh"
  [ "$status" -eq 127 ]
  [[ "$output" != *ran* ]]
}

@test "env: refuses the job's secret, the plugin's variables and Slurm's, naming key and line" {
  printf 'launch: {command: [a]}\nenv:\n  MSG: hi\n  DT_JOB_TOKEN: s3cret\n' >"$BATS_TEST_TMPDIR/tok.yaml"
  bounded "$BATS_TEST_TMPDIR/tok.yaml"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/tok.yaml:4:3: env.DT_JOB_TOKEN: 'DT_JOB_TOKEN' is reserved: DT_* belong to dist-train (DT_JOB_TOKEN is the job's secret and must not be stored in the script)" ]
  printf 'launch: {command: [a]}\nenv: {MASTER_PORT: 29500}\n' >"$BATS_TEST_TMPDIR/port.yaml"
  bounded "$BATS_TEST_TMPDIR/port.yaml"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/port.yaml:2:7: env.MASTER_PORT: 'MASTER_PORT' is reserved: dist-train's plugin sets it for every step" ]
  bounded torchrun.yaml --set env.SLURM_JOB_ID=1
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: --set env.SLURM_JOB_ID: env.SLURM_JOB_ID: 'SLURM_JOB_ID' is reserved: SLURM_* are Slurm's" ]
}

@test "each sweep point's run directory holds its params.json before setup runs" {
  cat >"$BATS_TEST_TMPDIR/p.yaml" <<'YAML'
launch: {style: custom, command: [cat, params.json]}
setup: ['cd "$DT_RUN_DIR"']
sweep:
  points:
    - {lr: 1.0e-5, name: "it's \"x\"", layers: 007}
    - {lr: -3, name: "a\nb", layers: 12}
YAML
  run "$GEN" "$BATS_TEST_TMPDIR/p.yaml" -o "$BATS_TEST_TMPDIR/p.sh"
  [ "$status" -eq 0 ]
  cd "$BATS_TEST_TMPDIR"
  for i in 0 1; do
    run env SLURM_ARRAY_TASK_ID=$i SLURM_JOB_NAME=p SLURM_ARRAY_JOB_ID=7 bash p.sh
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat "runs/p-7/$i/params.json")" ]
  done
  python3 - <<'PY'
import json
a = json.load(open("runs/p-7/0/params.json"))
b = json.load(open("runs/p-7/1/params.json"))
assert a == {"lr": 1e-05, "name": "it's \"x\"", "layers": "007"}, a
assert b == {"lr": -3, "name": "a\nb", "layers": 12}, b
PY
}

@test "\${NAME} in command words is expanded by the job's shell, one word each; the rest stays literal" {
  cat >"$BATS_TEST_TMPDIR/refs.yaml" <<'YAML'
launch:
  style: custom
  command: [printf, '<%s>\n', '--ckpt=${DT_RUN_DIR}/ckpt.pt', '${lr}', '$${HOME}', '$HOME', '$(id)']
sweep:
  points: [{lr: "a b *"}]
YAML
  run "$GEN" "$BATS_TEST_TMPDIR/refs.yaml" -o "$BATS_TEST_TMPDIR/refs.sh"
  [ "$status" -eq 0 ]
  cd "$BATS_TEST_TMPDIR"
  run env SLURM_ARRAY_TASK_ID=0 SLURM_JOB_NAME=r SLURM_ARRAY_JOB_ID=9 bash refs.sh
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "<--ckpt=$PWD/runs/r-9/0/ckpt.pt>"$'\n<a b *>\n<${HOME}>\n<$HOME>\n<$(id)>' ]
  shellcheck refs.sh
  printf 'launch: {command: [a, "${HOME:-x}"]}\n' >bad.yaml
  run "$GEN" bad.yaml
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: bad.yaml:1:23: launch.command[1]: '\${HOME:-x}' is no \${NAME} reference (only \${NAME} is expanded; write \$\${ for a literal \${)" ]
}

@test "--collect without a cluster: points from sweep.json, 'ended' where a run folder exists, a bad metrics.json named; usage errors" {
  dir=$BATS_TEST_TMPDIR/runs/s-77
  mkdir -p "$dir/0" "$dir/1"
  printf '{"array_job_id":77,"first":0,"points":[{"lr":0.1},{"lr":0.2},{"lr":0.3}]}\n' >"$dir/sweep.json"
  printf '{"lr":0.1}\n' >"$dir/0/params.json"
  printf '{"loss":1.5}\n' >"$dir/0/metrics.json"
  printf '{"lr":0.2}\n' >"$dir/1/params.json"
  printf '[1, 2]\n' >"$dir/1/metrics.json"
  # no Slurm to ask: SLURM_CONF names no file
  run --separate-stderr env SLURM_CONF=/nonexistent "$GEN" --collect "$dir/"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'index  state    lr   loss\n0      ended    0.1  1.5\n1      ended    0.2\n2      unknown  0.3')" ]
  [ "$stderr" = "gen-sbatch: --collect: $dir/1/metrics.json: expected a JSON object" ]
  run --separate-stderr env SLURM_CONF=/nonexistent "$GEN" --collect "$dir" --csv
  [ "$(sed -n 2p <<<"$output")" = "0,ended,0.1,1.5" ]
  run "$GEN" --collect "$BATS_TEST_TMPDIR/nope"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $BATS_TEST_TMPDIR/nope: no such directory" ]
  run "$GEN" --collect "$BATS_TEST_TMPDIR"
  [ "$status" -eq 1 ]
  [[ $output == *"not a sweep's run directory"* ]]
  run "$GEN" custom.yaml --csv
  [ "$status" -eq 2 ]
  run "$GEN" custom.yaml --collect "$dir"
  [ "$status" -eq 2 ]
}

@test "sweep.workdir: each point works in its own run directory (absolute DT_RUN_DIR, DT_SUBMIT_DIR); submit keeps sbatch's; relative command files are noted" {
  cat >"$BATS_TEST_TMPDIR/w.yaml" <<'YAML'
launch:
  style: custom
  command: [bash, -c, 'echo "$PWD $DT_RUN_DIR $DT_SUBMIT_DIR $DT_CHECKPOINT_DIR"; ls']
setup: ['touch made-by-setup']
preemption: {checkpoint_dir: ckpt}
sweep:
  points: [{lr: 1}, {lr: 2}]
YAML
  cd "$BATS_TEST_TMPDIR"
  run "$GEN" w.yaml -o w.sh
  [ "$status" -eq 0 ]
  for i in 0 1; do
    run env SLURM_ARRAY_TASK_ID=$i SLURM_JOB_NAME=w SLURM_ARRAY_JOB_ID=5 bash w.sh
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$PWD/runs/w-5/$i $PWD/runs/w-5/$i $PWD $PWD/ckpt/$i" ]
    # setup ran in the point's directory, next to its params.json
    [ "$(printf '%s ' "${lines[@]:1}")" = "made-by-setup params.json " ]
  done
  run "$GEN" w.yaml --set sweep.workdir=submit -o s.sh
  [ "$status" -eq 0 ]
  run env SLURM_ARRAY_TASK_ID=0 SLURM_JOB_NAME=s SLURM_ARRAY_JOB_ID=6 bash s.sh
  [ "${lines[0]}" = "$PWD runs/s-6/0  ckpt/0" ]
  run "$GEN" w.yaml --set sweep.workdir=there
  [ "$status" -eq 1 ]
  [[ $output == *"sweep.workdir: expected run (the point's run directory) or submit (where sbatch ran), got 'there'" ]]
  touch train.py
  printf 'launch: {command: [python3, train.py, --out, "${DT_RUN_DIR}/x"]}\nsweep: {points: [{lr: 1}]}\n' >rel.yaml
  run --separate-stderr "$GEN" rel.yaml
  [ "$status" -eq 0 ]
  [ "$stderr" = "gen-sbatch: note: each sweep point runs in its run directory (sweep.workdir: run), where 'train.py' cannot be found by the relative path: write \${DT_SUBMIT_DIR}/... (the directory sbatch ran in), or set sweep.workdir: submit" ]
  run --separate-stderr "$GEN" rel.yaml --set sweep.workdir=submit
  [ -z "$stderr" ]
}

@test "a control character in the program's name is refused naming the key; in an argument it is quoted" {
  run "$GEN" "$REPO/fuzz/corpus/gen_sbatch/newline-in-first-word.yaml"
  [ "$status" -eq 1 ]
  [ "$output" = "gen-sbatch: $REPO/fuzz/corpus/gen_sbatch/newline-in-first-word.yaml:3:13: launch.command[0]: the program's name has a control character (byte 0x0a, a newline); a program is named on one line" ]
  cd "$BATS_TEST_TMPDIR"
  printf 'launch:\n  style: custom\n  command: [python3, -c, "print(1)\\nprint(2)"]\n' >arg.yaml
  run "$GEN" arg.yaml -o arg.sh
  [ "$status" -eq 0 ]
  shellcheck arg.sh
}
