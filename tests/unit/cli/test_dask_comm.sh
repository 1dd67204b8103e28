#!/usr/bin/env bash
# recipes/dask_comm.py on a dask.distributed LocalCluster (2 worker processes) over a
# generated 64-rank job split into per-rank traces (gpuscope_make_comm_job: 8 hosts of 8,
# rank 37 late from step 2 of 5): its reports equal the one-machine paths' — gpuscope stats
# over the per-rank traces (map in threads, reduce), over the summaries the recipe kept, and
# over the one trace holding every rank — row for row and note for note (but the note naming
# the 8 hosts' clock offsets, which the one trace has no reason to print). Exit 77 (skipped) without Debian's python3-distributed.
set -euo pipefail
BUILD=$1
SRC=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! "$PY" -c 'import dask.distributed' 2>/dev/null; then
  echo "SKIPPED: $PY has no dask.distributed (scripts/install-deps installs python3-distributed)"
  exit 77
fi
G="$BUILD/bin/gpuscope"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BUILD/bin/gpuscope_make_comm_job" "$tmp/job" 64 5 37 2
R=nccl_sum,comm_overlap,rank_sum,stragglers,collective_trace
"$PY" "$SRC/recipes/dask_comm.py" --local 2 --gpuscope "$G" -r "$R" --format json -o "$tmp/dask.json" \
  --keep-summaries "$tmp/sums" "$tmp"/job/rank*.sqlite
"$G" stats "$tmp"/job/rank*.sqlite -r "$R" --format json -j 2 -o "$tmp/threads.json"
"$G" stats "$tmp/job/job.sqlite" -r "$R" --format json -o "$tmp/one.json"
"$G" stats "$tmp"/sums/*.summary.json -r "$R" --format json -o "$tmp/sums.json"
"$PY" - "$tmp" <<'PYEOF'
import json, sys
tmp = sys.argv[1]
def load(name):
    with open(f"{tmp}/{name}.json") as f:
        return json.load(f)["reports"]
def strip(reports):
    out = {}
    for name, r in reports.items():
        notes = [n for n in r.get("notes", []) if not str(n.get("text", n)).startswith("clocks of")]
        out[name] = {"columns": r["columns"], "rows": r["rows"], "notes": notes}
    return out
dask, threads, one, sums = load("dask"), load("threads"), load("one"), load("sums")
assert set(dask) == {"nccl_sum", "comm_overlap", "rank_sum", "stragglers", "collective_trace"}, dask.keys()
assert dask == threads, "Dask recipe != gpuscope stats over the rank traces"
assert dask == sums, "Dask recipe != gpuscope stats over the kept summaries"
assert strip(dask) == strip(one), "Dask recipe != gpuscope stats of the one trace"
clock = [n for n in dask["stragglers"]["notes"] if "clocks of" in str(n)]
assert clock and "node1 moved by 0 s" in str(clock[0]), clock
g = dask["stragglers"]
late = g["rows"][37]
assert late[0] == 37 and late[2] == 3, late  # rank 37 came last at 3 collectives
assert any("rank 37 holds the job back by 7.5 % of step time after warm-up" in str(n) for n in g["notes"]), g["notes"]
assert len(dask["comm_overlap"]["rows"]) == 64 * 5
print("dask recipe == one-machine paths: %d reports, %d comm_overlap rows" % (len(dask), len(dask["comm_overlap"]["rows"])))
PYEOF
