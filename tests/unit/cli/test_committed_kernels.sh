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

# Bad input: a trace without kernel profiles says what to run.
if "$bin" kernels --report "$(cd "$1" && pwd)/test-data/cnn.sqlite" > "$work/none.txt" 2>&1; then
  echo "FAIL a trace without kernel profiles should exit non-zero"; exit 1
fi
grep -q "gpuscope kernels" "$work/none.txt"
echo "ok   a trace without kernel profiles exits 1 and says to run gpuscope kernels"
