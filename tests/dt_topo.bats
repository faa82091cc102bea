#!/usr/bin/env bats
# dt-topo as a user runs it (no Slurm needed): the plan table with global
# and local ranks, GPU index and model, why each NIC; --json; and --svg,
# checked as XML here and, where Chromium is installed, rendered.

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  TOPO="$REPO/${DT_BUILD_DIR:-build}/tools/dt-topo"
  [ -x "$TOPO" ] || skip "no $TOPO (build first)"
  DGX="$REPO/tests/fixtures/dgx-h100-8gpu.xml"
}

@test "the table numbers ranks node by node and names GPU, model and NIC choice" {
  run "$TOPO" --topology "$DGX" --ntasks 4 --node-rank 2
  echo "$output"
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == "rank  local  gpu  model      bus id "* ]]
  [[ ${lines[0]} == *"  nic choice  "* ]]
  read -r rank local gpu model _ <<<"${lines[3]}"
  [ "$rank $local $gpu $model" = "10 2 4-5 10de:2330" ]
  [[ ${lines[3]} == *"rdma, same PCIe switch as GPU 4 (4 hops)"* ]]
}

@test "--json has rank, gpu_index, gpu_model and nic_reason" {
  run "$TOPO" --topology "$DGX" --node-rank 1 --json
  [ "$status" -eq 0 ]
  python3 - "$output" <<'PY'
import json, sys
plan = json.loads(sys.argv[1])
assert [r["rank"] for r in plan] == list(range(8, 16)), plan
assert [r["gpu_index"] for r in plan] == list(range(8))
assert {r["gpu_model"] for r in plan} == {"10de:2330"}
assert plan[5]["nic_reason"] == "rdma, same PCIe switch as GPU 5 (4 hops)", plan[5]
PY
}

@test "a bad --node-rank is a usage error naming the option" {
  run "$TOPO" --topology "$DGX" --node-rank -1
  [ "$status" -eq 2 ]
  [[ $output == *"--node-rank"* ]]
}

# svg_counts FILE: "package numa switch gpu nic cpus legend" element counts,
# then each GPU's "index:local-rank" as data attributes say.
svg_counts() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
rects = root.iter(ns + "rect")
count = {k: 0 for k in ("package", "numa", "switch", "gpu", "nic", "cpus")}
gpus = []
for r in root.iter(ns + "rect"):
    c = r.get("class")
    if c in count:
        count[c] += 1
    if c == "gpu":
        gpus.append("%s:%s" % (r.get("data-gpu"), r.get("data-rank", "-")))
legend = sum(1 for g in root.iter(ns + "g") if g.get("class") == "legend-row")
print(*[count[k] for k in count], legend)
print(*gpus)
PY
}

@test "--svg draws packages, NUMA nodes, switches, GPUs and NICs with each rank's share" {
  run "$TOPO" --topology "$DGX" --ntasks 4 --svg "$BATS_TEST_TMPDIR/plan.svg"
  [ "$status" -eq 0 ]
  run svg_counts "$BATS_TEST_TMPDIR/plan.svg"
  echo "$output"
  # 2 packages, 2 NUMA nodes, 6+5 switch boxes (a GPU and its NIC behind
  # each of 8; storage and management NICs behind 3), 8 GPUs, 13 NICs, 4
  # CPU shares (each rank's CPUs lie in one NUMA node), 4 legend rows
  [ "${lines[0]}" = "2 2 11 8 13 4 4" ]
  [ "${lines[1]}" = "0:0 1:0 2:1 3:1 4:2 5:2 6:3 7:3" ]
  grep -q '>GPU 6  rank 3<' "$BATS_TEST_TMPDIR/plan.svg"
  grep -q '>rank 2 (local 2): GPU 4-5, NIC mlx5_6,mlx5_9, CPUs 8-11,24-27<' "$BATS_TEST_TMPDIR/plan.svg"
}

@test "--svg escapes the topology's names and keeps an old file when it cannot write" {
  echo old >"$BATS_TEST_TMPDIR/keep.svg"
  mkdir "$BATS_TEST_TMPDIR/keep.svg.tmp"  # where the new drawing would go
  run "$TOPO" --topology "$DGX" --svg "$BATS_TEST_TMPDIR/keep.svg"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == "dt-topo: $BATS_TEST_TMPDIR/keep.svg: cannot write: "* ]]
  [ "$(cat "$BATS_TEST_TMPDIR/keep.svg")" = old ]
  sed 's|pci_type="0302 \[10de:2330\]\([^/]*\)/>|pci_type="0302 [10de:2330]\1><info name="PCIDevice" value="A\&lt;B\&amp;C"/></object>|' \
    "$DGX" >"$BATS_TEST_TMPDIR/named.xml"
  run "$TOPO" --topology "$BATS_TEST_TMPDIR/named.xml" --svg "$BATS_TEST_TMPDIR/named.svg"
  [ "$status" -eq 0 ]
  grep -q '>A&lt;B&amp;C<' "$BATS_TEST_TMPDIR/named.svg"
  python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$BATS_TEST_TMPDIR/named.svg"
}

# Rendered by a browser: every box has a size, every label fits its box.
@test "--svg renders in headless Chromium with every label inside its box" {
  command -v chromium >/dev/null || skip "chromium is not installed"
  for topo in "$DGX" "$REPO/tests/fixtures/dgx2-16gpu.xml" \
    "$REPO/tests/fixtures/no-locality-amd.xml"; do
    "$TOPO" --topology "$topo" --svg "$BATS_TEST_TMPDIR/t.svg" >/dev/null
    {
      echo '<!DOCTYPE html><html><body>'
      sed 1d "$BATS_TEST_TMPDIR/t.svg" | sed '1i <svg xmlns="http://www.w3.org/2000/svg" font-family="DejaVu Sans Mono, monospace" font-size="11" width="4000" height="4000">'
      cat <<'JS'
<pre id="result"></pre><script>
const q = s => Array.from(document.querySelectorAll(s));
const out = {};
for (const c of ["package", "numa", "switch", "gpu", "nic"])
  out[c] = q("rect." + c).filter(r => r.getBBox().width > 0).length;
out.gpuLabels = q("text").filter(t => /^GPU \d+ /.test(t.textContent)).length;
out.overflow = [];
for (const r of q("rect.gpu, rect.nic, rect.numa, rect.switch, rect.package")) {
  const b = r.getBBox();
  for (let t = r.nextElementSibling; t && t.tagName === "text"; t = t.nextElementSibling) {
    const tb = t.getBBox();
    if (tb.x < b.x || tb.y < b.y || tb.x + tb.width > b.x + b.width ||
        tb.y + tb.height > b.y + b.height) out.overflow.push(t.textContent);
  }
}
document.getElementById("result").textContent = JSON.stringify(out);
</script></body></html>
JS
    } >"$BATS_TEST_TMPDIR/t.html"
    run timeout 60 chromium --headless --no-sandbox --disable-gpu --dump-dom \
      "file://$BATS_TEST_TMPDIR/t.html"
    result=$(grep -o '<pre id="result">[^<]*' <<<"$output" | sed 's/^<pre id="result">//')
    echo "$topo: $result"
    [ -n "$result" ]
    python3 - "$result" "$BATS_TEST_TMPDIR/t.svg" <<'PY'
import json, sys, xml.etree.ElementTree as ET
got = json.loads(sys.argv[1])
ns = "{http://www.w3.org/2000/svg}"
want = {}
for r in ET.parse(sys.argv[2]).getroot().iter(ns + "rect"):
    want[r.get("class")] = want.get(r.get("class"), 0) + 1
for c in ("package", "numa", "switch", "gpu", "nic"):
    assert got[c] == want.get(c, 0), (c, got[c], want.get(c))
assert got["gpuLabels"] == want["gpu"], got
assert got["overflow"] == [], got["overflow"]
PY
  done
}

@test "the drawing in docs/binding.md is what dt-topo draws today" {
  cd "$REPO"
  "$TOPO" --topology tests/fixtures/dgx-h100-8gpu.xml --ntasks 4 --node-rank 1 \
    --svg "$BATS_TEST_TMPDIR/now.svg" >/dev/null
  diff -u docs/dt-topo-dgx-h100.svg "$BATS_TEST_TMPDIR/now.svg"
}
