#!/usr/bin/env bats
# gen-sbatch end to end on the local cluster: generated scripts, submitted
# with --submit by the unprivileged user, run and are wired.

load common

setup() {
  require_cluster
  make_outdir
  GEN="$DT_REPO/build/tools/gen-sbatch"
  as_user test -x "$GEN" || skip "$DT_USER cannot run $GEN"
}

teardown() {
  cleanup_outdir
}

# Waits until no task of job $1 is pending or running (at most 120 s).
wait_all() {
  local deadline=$((SECONDS + 120))
  while ((SECONDS < deadline)); do
    [[ -z $(squeue -h -j "$1" 2>/dev/null) ]] && return 0
    sleep 0.2
  done
  squeue -j "$1" >&2
  return 1
}

@test "a generated 2-node script runs and its tasks are wired" {
  write_script train.yaml <<'EOF2'
job: {name: wired, nodes: 2, tasks_per_node: 2}
launch: {command: [python3, dump_task.py, .]}
EOF2
  run as_user bash -c "cd '$OUT' && '$GEN' train.yaml --submit"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  job=$output
  [[ $job =~ ^[0-9]+$ ]]
  wait_all "$job"
  [ "$(wait_job "$job")" = COMPLETED ]
  python3 "$OUT/check_contract.py" "$OUT" "$job" 0 --tasks-per-node 2,2
}

@test "a 3x4 grid sweep submitted with --submit runs 12 array tasks, each with exactly its point" {
  write_script sweep.yaml <<'EOF2'
job: {name: grid, nodes: 1}
launch:
  command: [bash, -c, 'echo "$lr $bs $*" > "$DT_SUBMIT_DIR/point.$DT_SWEEP_INDEX"', sweep]
sweep:
  grid: {lr: [0.1, 0.01, 0.001], bs: [32, 64, 128, 256]}
  parallel: 6
  pass_as: both
  run_dir: runs
EOF2
  run as_user bash -c "cd '$OUT' && '$GEN' sweep.yaml --submit"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  job=$output
  wait_all "$job"
  table=$(cd "$OUT" && "$GEN" sweep.yaml --list-sweep)
  [ "$(ls "$OUT"/point.* | wc -l)" -eq 12 ]
  for i in $(seq 0 11); do
    read -r _ lr bs <<<"$(sed -n "$((i + 2))p" <<<"$table")"
    [ "$(cat "$OUT/point.$i")" = "$lr $bs --lr=$lr --bs=$bs" ] || { echo "point $i: $(cat "$OUT/point.$i")"; false; }
    [ "$(cat "$OUT/runs/grid-$job/$i/params.json")" = "{\"lr\":$lr,\"bs\":$bs}" ]
  done
  [ "$(ls "$OUT"/grid-"$job"_*.out | wc -l)" -eq 12 ]
}

@test "style torchrun with a configured launcher: 2 nodes x 2 workers all-reduce" {
  write_script torch.yaml <<'EOF2'
job: {name: tr, nodes: 2}
launch:
  style: torchrun
  # Debian 12's own torchrun crashes at start (docs/user-guide.md)
  launcher: [/usr/bin/python3, torchrun_debian.py]
  command: [gloo_allreduce.py]
  nproc_per_node: 2
EOF2
  run as_user bash -c "cd '$OUT' && '$GEN' torch.yaml --submit"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  job=$output
  wait_all "$job"
  cat "$OUT/tr-$job.out"
  [ "$(wait_job "$job")" = COMPLETED ]
  [ "$(grep -o 'allreduce sum 10 (want 10) OK' "$OUT/tr-$job.out" | wc -l)" -eq 4 ]
}

@test "a 3x2 sweep with a metrics file per point: --collect lists every point (also before they ran) with its state, parameters and metrics" {
  write_script sweep.yaml <<'EOF2'
job: {name: coll, nodes: 1}
launch:
  # the program writes its metrics; the point lr=0.3, bs=2 fails
  command: [python3, -c, 'import json, os, sys; lr, bs = float(os.environ["lr"]), int(os.environ["bs"]); json.dump({"loss": lr / bs, "world": int(os.environ["WORLD_SIZE"])}, open(os.environ["DT_RUN_DIR"] + "/metrics.json", "w")); sys.exit(3 if (lr, bs) == (0.3, 2) else 0)']
sweep:
  grid: {lr: [0.1, 0.2, 0.3], bs: [1, 2]}
  parallel: 2
  pass_as: env
EOF2
  run as_user bash -c "cd '$OUT' && '$GEN' sweep.yaml --submit"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  job=$output
  dir=$OUT/runs/coll-$job
  [ -s "$dir/sweep.json" ]
  # right after submission: all six points, none done yet or some running
  run as_user "$GEN" --collect "$dir"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $(sed -n 1p <<<"$output") =~ ^index\ +state\ +lr\ +bs ]]
  [ "$(tail -n +2 <<<"$output" | grep -cE '^[0-5] +(pending|running|done) ')" -eq 6 ]
  wait_all "$job"
  run as_user "$GEN" --collect "$dir"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $(sed -n 1p <<<"$output") =~ ^index\ +state\ +lr\ +bs\ +loss\ +world$ ]]
  [[ $(sed -n 2p <<<"$output") =~ ^0\ +done\ +0\.1\ +1\ +0\.1\ +1$ ]]
  [[ $(sed -n 7p <<<"$output") =~ ^5\ +failed:FAILED\ +0\.3\ +2\ +0\.15\ +1$ ]]
  [ "$(grep -c " done " <<<"$output")" -eq 5 ]
  for i in 0 1 2 3 4 5; do [ -s "$dir/$i/params.json" ]; done
  [ "$(cat "$dir/3/params.json")" = '{"lr":0.2,"bs":2}' ]
  run as_user "$GEN" --collect "$dir" --csv
  [ "$(sed -n 1p <<<"$output")" = "index,state,lr,bs,loss,world" ]
  [ "$(sed -n 4p <<<"$output")" = "2,done,0.2,1,0.2,1" ]
  run as_user "$GEN" --collect "$dir" --json
  [ "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), d[5]["slurm_state"], d[5]["metrics"]["loss"])' <<<"$output")" = "6 FAILED 0.15" ]
}
