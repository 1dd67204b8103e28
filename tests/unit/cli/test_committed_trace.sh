#!/usr/bin/env bash
# CI checks on a real trace recorded on the GPU machine (tests/data/cnn.logs, imported at
# build time into BUILD_DIR/test-data/cnn.sqlite: examples/pytorch/cnn_train.py, steps 5-10
# via --capture-range=cudaProfilerApi, H100):
# the summary and the nsys-style stats match their golden CSVs, the kernels match what torch.profiler recorded
# for the same steps (tests/data/cnn.torch_kernels.json), and the Perfetto export is a
# well-formed timeline. Usage: test_committed_trace.sh BUILD_DIR SOURCE_DIR
# GPUSCOPE_REWRITE_EXPECTED=1 rewrites the expected CSVs from this build's output (after a
# deliberate change of a report or a new recording; review the diff before committing).
set -euo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
cnn="$(cd "$1" && pwd)/test-data/cnn.sqlite"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
expect() {  # expect EXPECTED ACTUAL: diff, or rewrite EXPECTED under GPUSCOPE_REWRITE_EXPECTED=1
  if [[ ${GPUSCOPE_REWRITE_EXPECTED:-0} == 1 ]]; then cp "$2" "$1"; echo "rewrote $1"; else diff -u "$1" "$2"; fi
}

"$bin" summary "$cnn" --format csv > "$work/summary.csv"
expect "$src/tests/data/cnn.summary.csv" "$work/summary.csv"
echo "ok   summary matches tests/data/cnn.summary.csv"

reports=cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,nvtx_gpu_proj_sum,gpu_util,launch_overhead,sync_wait,memcpy_check,top
"$bin" stats "$cnn" -r "$reports" --format csv > "$work/stats.csv"
expect "$src/tests/data/cnn.stats.csv" "$work/stats.csv"
echo "ok   stats (nsys reports and diagnoses) match tests/data/cnn.stats.csv"

python3 "$src/validation/compare_kernels.py" --torch "$src/tests/data/cnn.torch_kernels.json" \
  --trace "$cnn" --out "$work/compare.md" >/dev/null
grep "names matching" "$work/compare.md"
echo "ok   kernel names and counts equal torch.profiler's"

"$bin" export "$cnn" --format perfetto -o "$work/cnn.json" 2>/dev/null
python3 - "$work/cnn.json" "$cnn" <<'PY'
import json, sqlite3, sys
doc = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
ev = doc["traceEvents"]
def count(q): return db.execute(q).fetchone()[0]
kern = [e for e in ev if e.get("cat") == "kernel"]
assert len(kern) == count("SELECT COUNT(*) FROM kernels") == 306, len(kern)
steps = sorted(e["name"] for e in ev if e.get("cat") == "user_annotation")
assert steps == sorted(f"step {i}" for i in range(5, 11)), steps
starts = {e["id"] for e in ev if e.get("ph") == "s"}
ends = {e["id"] for e in ev if e.get("ph") == "f"}
assert ends and ends <= starts, "every flow end has a start"
k = kern[0]
for key in ("grid", "block", "registers per thread", "shared memory", "stream", "correlation", "device"):
    assert key in k["args"], key
# ns-exact timestamps: the first kernel's start, from the database, in us with 3 decimals
base = doc["baseTimeNanoseconds"]
first = db.execute("SELECT MIN(start_ns) FROM kernels").fetchone()[0]
ts = min(e["ts"] for e in kern)
assert abs(ts - (first - base) / 1000) < 0.0005, (ts, first, base)
print("ok   perfetto export: 306 kernels, steps 5-10, flows, Kineto args, ns-exact ts")
PY

# --format pftrace: the default name NAME.pftrace; a Trace whose first packet (field 1,
# length-delimited) is there and smaller than the JSON (its content: test_timeline_pftrace).
cp "$cnn" "$work/cnn_pb.sqlite"
"$bin" export "$work/cnn_pb.sqlite" --format pftrace 2>/dev/null
python3 - "$work/cnn_pb.pftrace" "$work/cnn.json" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
assert data[:1] == b"\x0a", data[:4]
assert 5 * len(data) < os.path.getsize(sys.argv[2]), (len(data), os.path.getsize(sys.argv[2]))
print(f"ok   pftrace export: {len(data)} bytes, {os.path.getsize(sys.argv[2]) / len(data):.1f}x smaller than the JSON")
PY
