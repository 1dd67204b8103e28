#!/usr/bin/env bash
# Big traces (docs/performance.md, "Big traces"): on a 306,300-event synthetic trace
# (gpuscope_make_trace --launches 150000: 150,000 kernels and their launch calls, copies,
# syncs, NVTX ranges) the streamed Perfetto export is valid JSON with one event per row
# and stays small in memory, and a report that would hold one row per event refuses above
# the memory budget with advice (a small GPUSCOPE_MEMORY_BUDGET stands in for a trace 100x
# bigger), while --top reads its first rows alone. Not timed.
# Usage: test_big_trace.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/bin/gpuscope_make_trace" "$work/big.sqlite" --launches 150000 > "$work/counts.json"

python3 - "$build/bin/gpuscope" "$work" <<'PY'
import json, os, resource, sqlite3, subprocess, sys
gpuscope, work = sys.argv[1], sys.argv[2]
trace = os.path.join(work, "big.sqlite")
db = sqlite3.connect(trace)
def count(table): return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

def run(*args, budget=None):
    env = dict(os.environ)
    env.pop("GPUSCOPE_MEMORY_BUDGET", None)
    if budget: env["GPUSCOPE_MEMORY_BUDGET"] = budget
    return subprocess.run([gpuscope, *args], capture_output=True, text=True, env=env)

# 1. The export streams: its peak memory is that of one event, not of the trace (the
#    whole timeline in memory took about 100 MB here; streamed, about 12 MB).
r = run("export", trace, "-o", os.path.join(work, "big.json"))
assert r.returncode == 0, r.stderr
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
assert peak_mb < 40, f"export peak RSS {peak_mb:.0f} MB"
doc = json.load(open(os.path.join(work, "big.json")))
events = doc["traceEvents"]
by_cat = {}
for e in events:
    key = (e["ph"], e.get("cat", ""))
    by_cat[key] = by_cat.get(key, 0) + 1
kernels, api, copies = count("kernels"), count("api_calls"), count("memcpys")
assert kernels == 150000, kernels
assert by_cat.get(("X", "kernel")) == kernels, by_cat
assert by_cat.get(("X", "cuda_runtime"), 0) + by_cat.get(("X", "cuda_driver"), 0) == api, by_cat
assert by_cat.get(("X", "gpu_memcpy")) == copies, by_cat
assert by_cat.get(("X", "cuda_sync")) == count("syncs"), by_cat
assert by_cat.get(("X", "user_annotation")) == count("nvtx_events"), by_cat
# every kernel and copy was launched by a call in the trace: one flow each way
assert by_cat.get(("s", "ac2g")) == by_cat.get(("f", "ac2g")) == kernels + copies, by_cat
ts = [e["ts"] for e in events if e.get("cat") == "kernel"]
assert ts == sorted(ts), "kernels in time order"
print(f"ok   export: {len(events)} events (kernels {kernels}, API calls {api}), valid JSON, peak RSS {peak_mb:.0f} MB")

# 2. cuda_gpu_trace would hold 150,150 rows (about 450 MB): above a 64 MiB budget it refuses,
#    says how many rows and what to do, and prints nothing on stdout.
r = run("stats", trace, "-r", "cuda_gpu_trace", "--format", "csv", budget="64MiB")
assert r.returncode == 1, (r.returncode, r.stderr)
assert r.stdout == "", r.stdout[:200]
for part in ("cuda_gpu_trace: the trace holds 150,150 kernels, memcpys and memsets", "--top N",
             "gpuscope export", "--from/--to", "GPUSCOPE_MEMORY_BUDGET="):
    assert part in r.stderr, (part, r.stderr)
r = run("stats", trace, "-r", "cuda_api_trace", budget="64MiB")
assert r.returncode == 1 and "cuda_api_trace: the trace holds" in r.stderr, r.stderr
print("ok   cuda_gpu_trace, cuda_api_trace above the budget: refused with advice")

# 3. --top N reads the first N rows alone, whatever the budget.
r = run("stats", trace, "-r", "cuda_gpu_trace", "--top", "5", "--format", "json", budget="64MiB")
assert r.returncode == 0, r.stderr
rep = json.loads(r.stdout)["reports"]["cuda_gpu_trace"]
assert len(rep["rows"]) == 5, rep
starts = [row[0] for row in rep["rows"]]
assert starts == sorted(starts), starts
print("ok   --top 5: the first 5 rows")

# 4. The default reports fit the same budget; a tiny one refuses them, naming the budget.
r = run("stats", trace, budget="64MiB")
assert r.returncode == 0, r.stderr
r = run("stats", trace, budget="1MiB")
assert r.returncode == 1 and "memory budget" in r.stderr and "No rows were loaded" in r.stderr, r.stderr
r = run("summary", trace, budget="64MiB")
assert r.returncode == 0, r.stderr
print("ok   stats and summary within a 64 MiB budget; refused under 1 MiB")
PY
