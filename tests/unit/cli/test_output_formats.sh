#!/usr/bin/env bash
# One document per format: every command that prints reports, run with --format json and
# --format csv on the committed recordings (BUILD_DIR/test-data/cnn.sqlite from
# tests/data/cnn.logs, kernels-h100.sqlite, the committed bench results and machine
# profile), parsed by Python's json and csv modules — one JSON value, one csv table with one
# header — and checked for the content it must hold (255 kernels in the summary, the
# sections each command prints). docs/output-formats.md describes the shapes.
# Usage: test_output_formats.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
data="$(cd "$1" && pwd)/test-data"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$bin" "$src" "$data" "$work" <<'PY'
import csv, io, json, subprocess, sys

gpuscope, src, data, work = sys.argv[1:5]
cnn = f"{data}/cnn.sqlite"
kern_db = f"{data}/kernels-h100.sqlite"
profile = f"{src}/tests/data/profile-h100.json"
bench_a = f"{src}/tests/data/bench-copy-sweep.json"
bench_b = f"{src}/tests/data/bench-copy-new.json"
checked = 0

def run(*args):
    p = subprocess.run([gpuscope, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL gpuscope {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout

def as_json(command, *args):
    """One JSON value (json.loads refuses a second document: 'Extra data')."""
    global checked
    doc = json.loads(run(*args, "--format", "json"))
    assert doc["schema_version"] == 1, doc.get("schema_version")
    assert doc["command"] == command, doc["command"]
    assert isinstance(doc["reports"], dict) and doc["reports"], args
    for name, r in doc["reports"].items():
        assert r["name"] == name.split("#")[0], (name, r["name"])
        assert all(len(row) == len(r["columns"]) for row in r["rows"]), name
    checked += 1
    return doc

def as_csv(*args, sections=True):
    """One table: one header row, every row as wide as it, no blank line."""
    global checked
    text = run(*args, "--format", "csv")
    assert "\n\n" not in text and text.endswith("\n"), f"blank line or no final newline in {args}"
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    assert all(len(r) == len(header) for r in body), args
    assert (header[0] == "section") == sections, (args, header[:3])
    checked += 1
    return [dict(zip(header, r)) for r in body], header

def column(report, name):
    return [row[[c["name"] for c in report["columns"]].index(name)] for row in report["rows"]]

# summary: the trace overview judges the steady state (steps 6-10: 255 kernels; 306 with
# --whole-run); csv always has the section column.
d = as_json("summary", "summary", cnn)
assert list(d["reports"]) == ["trace_overview", "cuda_gpu_kern_sum", "cuda_gpu_mem_sum"], list(d["reports"])
assert column(d["reports"]["trace_overview"], "Kernels") == [255]
assert column(as_json("summary", "summary", cnn, "--whole-run")["reports"]["trace_overview"], "Kernels") == [306]
assert len(d["reports"]["cuda_gpu_kern_sum"]["rows"]) == 10
rows, header = as_csv("summary", cnn)
assert {r["section"] for r in rows} == {"trace_overview", "cuda_gpu_kern_sum", "cuda_gpu_mem_sum"}
assert [r["Kernels"] for r in rows if r["section"] == "trace_overview"] == ["255"]
rows, header = as_csv("summary", cnn, "-r", "cuda_gpu_kern_sum", "--top", "0", sections=False)
assert header[0] == "Time (%)", header
kernel_names = len(rows)
assert sum(int(r["Instances"]) for r in rows) == 306  # --top 0: every kernel name
d = as_json("summary", "summary", cnn, "-r", "trace_overview")
assert list(d["reports"]) == ["trace_overview"]

# stats: the default report (top: two tables) and a list of reports as one document each;
# one report as a plain csv.
d = as_json("stats", "stats", cnn)
assert list(d["reports"]) == ["top", "top_kernels"], list(d["reports"])
rows, _ = as_csv("stats", cnn)
assert [r["Wall Time (ms)"] for r in rows if r["section"] == "top"][0].startswith("16.5")  # steady steps 6-10
several = "cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,nvtx_sum,gpu_util"
d = as_json("stats", "stats", cnn, "-r", several)
assert list(d["reports"]) == several.split(","), list(d["reports"])
kern = d["reports"]["cuda_gpu_kern_sum"]
assert sum(column(kern, "Instances")) == 306 and len(kern["rows"]) == kernel_names
rows, _ = as_csv("stats", cnn, "-r", several)
assert sum(int(r["Instances"]) for r in rows if r["section"] == "cuda_gpu_kern_sum") == 306
assert list(dict.fromkeys(r["section"] for r in rows)) == [k for k, v in d["reports"].items() if v["rows"]]
rows, header = as_csv("stats", cnn, "-r", "cuda_gpu_kern_sum", sections=False)
assert sum(int(r["Instances"]) for r in rows) == 306
d = as_json("stats", "stats", cnn, "-r", "nvtx_sum,nvtx_sum,top")  # a name twice prints once
assert list(d["reports"]) == ["nvtx_sum", "top", "top_kernels"], list(d["reports"])

# kernels: --report (one report), --list-sets (one document of every set).
d = as_json("kernels", "kernels", "--report", kern_db, "--profile", profile, "--by", "launch")
launches = d["reports"]["kernel_metrics"]["rows"]
assert launches and "Explanation" in [c["name"] for c in d["reports"]["kernel_metrics"]["columns"]]
rows, _ = as_csv("kernels", "--report", kern_db, "--profile", profile, "--by", "launch", sections=False)
assert len(rows) == len(launches)
d = as_json("kernels", "kernels", "--list-sets")
assert {"metric_set_quick", "metric_set_roofline"} <= set(d["reports"]), list(d["reports"])
rows, _ = as_csv("kernels", "--list-sets")
assert {r["section"] for r in rows} == set(d["reports"])
d = as_json("kernels", "kernels", "--list-metrics", "dram__bytes_read", "--chip", "GH100")
names = column(d["reports"]["metric_list"], "Name")
assert "dram__bytes_read.sum" in names, names[:5]
rows, _ = as_csv("kernels", "--list-metrics", "dram__bytes_read", "--chip", "GH100", sections=False)
assert [r["Name"] for r in rows] == names

# bench: list, report (cases + sweep), compare.
d = as_json("bench", "bench", "list")
assert "copy" in column(d["reports"]["bench_list"], "Op")
as_csv("bench", "list", sections=False)
d = as_json("bench", "bench", "report", bench_a)
assert list(d["reports"]) == ["bench_cases", "bench_sweep"], list(d["reports"])
rows, _ = as_csv("bench", "report", bench_a)
assert {r["section"] for r in rows} == {"bench_cases", "bench_sweep"}
d = as_json("bench", "bench", "compare", bench_a, bench_b)
assert d["reports"]["bench_compare"]["rows"]
as_csv("bench", "compare", bench_a, bench_b, sections=False)

# roofline: the machine profile and its ridge points.
d = as_json("roofline", "roofline", profile, "-o", f"{work}/r.svg")
assert list(d["reports"]) == ["machine_profile", "roofline"], list(d["reports"])
rows, _ = as_csv("roofline", profile, "-o", f"{work}/r2.svg")
assert {r["section"] for r in rows} == {"machine_profile", "roofline"}

print(f"ok   {checked} outputs (json and csv of summary, stats, kernels, bench, roofline) parse as one document each")
PY
