#!/usr/bin/env bats
# Checkpoints against a second local user (nobody): directories they own
# or can write, symlinks they plant at the names a job writes or reads.
# The job (root here) must leave the victim's files alone and say what is
# wrong. Runs the example trainer under dt-run --standalone.

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root to act as a second user (nobody)"
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  BUILD=${DT_TEST_BUILD:-$REPO/build}
  RUN="$BUILD/tools/dt-run"
  TRAIN="$BUILD/examples/train_linear"
  # BATS_TEST_TMPDIR is private: nobody needs a way in.
  BASE=$(mktemp -d /tmp/dt-file-attacks.XXXXXX)
  chmod 0755 "$BASE"
  printf 'victim secret\n' >"$BASE/victim"
  chmod 0600 "$BASE/victim"
  install -d -o nobody -m 0777 "$BASE/loot" # the attacker's own directory
}

teardown() {
  [ -n "${BASE:-}" ] && rm -rf "$BASE"
}

as_nobody() {
  setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# train DIR: 4 steps, a checkpoint every 2, checkpoints under DIR.
train() {
  DT_CHECKPOINT_DIR=$1 run "$RUN" --standalone --nproc 1 -- "$TRAIN" 7 4 0 2
}

nothing_leaked() {
  [ "$(cat "$BASE/victim")" = "victim secret" ]
  [ -z "$(ls -A "$BASE/loot")" ]
}

@test "a checkpoint directory another user made is refused, by name and owner" {
  chmod 1777 "$BASE" # like /tmp: nobody gets there first
  as_nobody mkdir -m 0755 "$BASE/ckpt"
  train "$BASE/ckpt"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$BASE/ckpt: owned by uid 65534, not by this user (uid 0); refusing it for checkpoints"* ]]
  [ -z "$(ls -A "$BASE/ckpt")" ]
}

@test "a checkpoint directory others can write without the sticky bit is refused" {
  mkdir -m 0777 "$BASE/ckpt"
  chmod 0777 "$BASE/ckpt"
  as_nobody ln -s "$BASE/loot" "$BASE/ckpt/step-2"
  train "$BASE/ckpt"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$BASE/ckpt: writable by other users (mode 0777, no sticky bit); refusing it for checkpoints"* ]]
  nothing_leaked
}

@test "a step directory planted as a symlink in a sticky directory is not followed" {
  mkdir "$BASE/ckpt"
  chmod 1777 "$BASE/ckpt"
  as_nobody ln -s "$BASE/loot" "$BASE/ckpt/step-2"
  train "$BASE/ckpt"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$BASE/ckpt/step-2: is a symbolic link; not following it"* ]]
  nothing_leaked
}

@test "a LATEST marker planted as a symlink is neither read nor written through" {
  mkdir "$BASE/ckpt"
  chmod 1777 "$BASE/ckpt"
  printf '2\n' >"$BASE/victim"
  as_nobody ln -s "$BASE/victim" "$BASE/ckpt/LATEST"
  train "$BASE/ckpt"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$BASE/ckpt/LATEST: is a symbolic link; not following it"* ]]
  [ "$(cat "$BASE/victim")" = "2" ]
}

@test "checkpoints are 0600 files in 0700 directories the job made" {
  train "$BASE/ckpt"
  [ "$status" -eq 0 ]
  [ "$(stat -c %a "$BASE/ckpt")" = 700 ]
  [ "$(stat -c %a "$BASE/ckpt/step-2")" = 700 ]
  [ "$(stat -c %a "$BASE/ckpt/step-2/rank-0.ckpt")" = 600 ]
  [ "$(stat -c %a "$BASE/ckpt/LATEST")" = 600 ]
  [ "$(cat "$BASE/ckpt/LATEST")" = 2 ]
  run as_nobody cat "$BASE/ckpt/step-2/rank-0.ckpt"
  [ "$status" -ne 0 ]
}
