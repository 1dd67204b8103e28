#!/usr/bin/env bash
# CI checks on hardware counters recorded on the GPU machine (tests/data/kernels-h100.logs,
# imported at build time into BUILD_DIR/test-data/kernels-h100.sqlite:
# `gpuscope kernels --set roofline -- kernel_mix`, H100) read against the committed H100
# machine profile (tests/data/profile-h100.json): the per-launch report matches its golden
# CSV, the verdicts are the ones the hand-computable kernels call for, and the roofline SVG
# places every kernel. Usage: test_committed_kernels.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$(cd "$1" && pwd)/test-data/kernels-h100.sqlite"
profile="$src/tests/data/profile-h100.json"

"$bin" kernels --report "$db" --profile "$profile" --by launch --format csv --no-explain > "$work/launch.csv" 2>/dev/null
if [[ ${GPUSCOPE_REWRITE_EXPECTED:-0} == 1 ]]; then  # after a deliberate change; review the diff
  cp "$work/launch.csv" "$src/tests/data/kernels-h100.csv"
fi
diff -u "$src/tests/data/kernels-h100.csv" "$work/launch.csv"
echo "ok   per-launch report matches tests/data/kernels-h100.csv"

"$bin" kernels --report "$db" --profile "$profile" --by name --svg "$work/roofline.svg" > "$work/name.txt" 2>&1
python3 - "$work/launch.csv" "$work/name.txt" "$work/roofline.svg" <<'PY'
import csv, sys
rows = {r["Name"]: r for r in csv.DictReader(open(sys.argv[1]))}
def bound(name): return rows[name]["Bound"]
assert bound("copy_f4") == "dram-bound", bound("copy_f4")
assert bound("evict_l2") == "dram-bound", bound("evict_l2")
assert bound("fma_loop") == "compute-bound (fp32)", bound("fma_loop")
assert bound("dfma_loop") == "compute-bound (fp64)", bound("dfma_loop")
assert bound("hfma2_loop") == "compute-bound (fp16)", bound("hfma2_loop")
assert bound("tiny") == "launch-bound", bound("tiny")
gemms = [n for n in rows if n.startswith("nvjet") or "xmma_gemm" in n]
assert len(gemms) == 3, gemms
for g in gemms:
    assert bound(g) == "compute-bound (tensor)", (g, bound(g))
    # cuBLAS 4096^3 GEMMs: 2*M*N*K = 137.44 GFLOP through the calibrated wgmma counters.
    # (+ the epilogue's CUDA-core FLOPs: within 0.1 %)
    assert abs(float(rows[g]["FLOP (GFLOP)"]) / (2 * 4096**3 / 1e9) - 1) < 1e-3, rows[g]["FLOP (GFLOP)"]
# fma_loop: 2^30 FFMA = 2^31 FLOP, hand-computable.
assert abs(float(rows["fma_loop"]["FLOP (GFLOP)"]) - 2**31 / 1e9) < 0.01
# hfma2_loop: 2^30 HFMA2 instructions, 4 FLOP each.
assert abs(float(rows["hfma2_loop"]["FLOP (GFLOP)"]) - 2**32 / 1e9) < 0.01, rows["hfma2_loop"]["FLOP (GFLOP)"]
text = open(sys.argv[2]).read()
assert "What bounds each kernel" in text and "measured DRAM copy ceiling" in text
svg = open(sys.argv[3]).read()
assert svg.startswith("<svg") or "<svg" in svg[:200]
for n in ("fma_loop", "hfma2_loop", "dfma_loop", "nvjet_sm90_tss"):
    assert n in svg, n
# Kernels with no FLOPs (copies, transposes, tiny) have no place on a log-scale roofline: said.
assert "4 kernels not drawn" in svg
print("ok   verdicts: copies DRAM-bound, FMA loops compute-bound per precision, tiny launch-bound, "
      "GEMMs tensor-bound at 2*M*N*K FLOP; roofline SVG places the kernels with FLOPs")
PY

# One roofline: every kernel's point (FLOP per DRAM byte, achieved FLOP/s with tensor-core FLOPs,
# bound) is the same in `kernels --report --format json`, the SVG (its markers' data-*
# attributes) and the data the HTML report embeds, all under the GPU's theoretical ceilings (an
# empty profile cache, as on a machine where `gpuscope peak` never ran); the BF16, FP16 and TF32
# GEMMs are on the page, compute-bound (tensor).
export GPUSCOPE_CACHE_DIR="$work/no-profiles"
"$bin" kernels --report "$db" --by name --format json --svg "$work/theoretical.svg" > "$work/name.json" 2>/dev/null
"$bin" report "$db" -o "$work/page.html" > /dev/null 2>&1
python3 - "$work/name.json" "$work/theoretical.svg" "$work/page.html" <<'PY'
import html, json, re, sys
scale = {"FLOP/s": 1.0, "GFLOP/s": 1e9, "TFLOP/s": 1e12, "FLOP/B": 1.0}
report = json.load(open(sys.argv[1]))["reports"]["kernel_metrics_sum"]
cols = [c["name"] for c in report["columns"]]
units = {c["name"]: c["unit"] for c in report["columns"]}
def value(row, name):
    v = row[cols.index(name)] if isinstance(row, list) else row[name]
    return None if v is None else v * scale[units[name]] if units[name] in scale else v
table = {}
for row in report["rows"]:
    name = row[cols.index("Name")] if isinstance(row, list) else row["Name"]
    table[name] = (value(row, "AI DRAM"), value(row, "Perf"), value(row, "Bound"))
svg = {}
for m in re.finditer(r'<circle class="point kernel"[^>]*>', open(sys.argv[2]).read()):
    a = dict((k, html.unescape(v)) for k, v in re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(0)))
    svg[a["kernel"]] = (float(a["intensity"]), float(a["flop-rate"]), a["bound"])
page_text = open(sys.argv[3]).read()
data = json.loads(re.search(r'<script type="application/json" id="gpuscope-data">(.*?)</script>', page_text, re.S).group(1))
page = {data["strings"][p["kernel"]]: (p["intensity"], p["flop_rate"], p["bound"])  # kernel: index into strings
        for p in data["roofline"]["points"] if p["on_roofline"]}
def close(a, b): return a is not None and b is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b))
assert page and set(page) == set(svg), (sorted(page), sorted(svg))
for name, (x, y, bound) in page.items():
    assert svg[name][0] == x and svg[name][1] == y and svg[name][2] == bound, (name, svg[name], page[name])
    t = table[name]
    assert close(t[0], x) and close(t[1], y) and t[2] == bound, (name, t, page[name])
# Kernels with FLOPs in the report are exactly those on the page; the others are off it.
assert set(page) == {n for n, t in table.items() if t[0] and t[1]}, sorted(page)
gemms = [n for n in page if n.startswith("nvjet") or "xmma_gemm" in n]
assert len(gemms) == 3, gemms
for g in gemms:
    assert page[g][2] == "compute-bound (tensor)" and page[g][1] > 100e12, (g, page[g])
assert page_text.count('class="point kernel"') == len(page)  # the page's chart draws the same points
print("ok   one roofline: kernels --report json, its SVG and the HTML page's data agree on every kernel; "
      "the BF16, FP16 and TF32 GEMMs are on the page, compute-bound (tensor)")
PY
unset GPUSCOPE_CACHE_DIR

# Bad input: a trace without kernel profiles says what to run.
if "$bin" kernels --report "$(cd "$1" && pwd)/test-data/cnn.sqlite" > "$work/none.txt" 2>&1; then
  echo "FAIL a trace without kernel profiles should exit non-zero"; exit 1
fi
grep -q "gpuscope kernels" "$work/none.txt"
echo "ok   a trace without kernel profiles exits 1 and says to run gpuscope kernels"
