#!/usr/bin/env bash
# Readable numbers on every command that prints tables (docs/output-formats.md, "Table and
# markdown"): units chosen per column in table format, --timeunit and --name-width accepted
# by stats, summary, diff, kernels and bench with the same values, kernels' short metric
# headers in the table, and csv/json unchanged by the layout options. Runs on the committed
# recordings (BUILD_DIR/test-data/*.sqlite, tests/data/*.json).
# Usage: test_table_layout.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
data="$(cd "$1" && pwd)/test-data"

python3 - "$bin" "$src" "$data" <<'PY'
import subprocess, sys

gpuscope, src, data = sys.argv[1:4]
cnn, torch_db, kern_db = f"{data}/cnn.sqlite", f"{data}/cnn-pytorch.sqlite", f"{data}/kernels-h100.sqlite"
profile = f"{src}/tests/data/profile-h100.json"
bench = f"{src}/tests/data/bench-copy-sweep.json"
checked = 0

def run(*args, rc=0):
    p = subprocess.run([gpuscope, *args], capture_output=True, text=True)
    if p.returncode != rc:
        sys.exit(f"FAIL gpuscope {' '.join(args)}: exit {p.returncode}, expected {rc}\n{p.stdout[-2000:]}{p.stderr}")
    return p.stdout + p.stderr

def check(what, ok, text=""):
    global checked
    if not ok:
        sys.exit(f"FAIL {what}\n{text[-3000:]}")
    checked += 1

commands = {
    "stats": ["stats", cnn, "-r", "cuda_gpu_kern_sum"],
    "summary": ["summary", cnn],
    "diff": ["diff", cnn, cnn],
    "kernels": ["kernels", "--report", kern_db, "--profile", profile, "--by", "launch", "--no-explain"],
    "bench": ["bench", "report", bench],
}

for name, args in commands.items():
    # The same option, the same values, on every command.
    out = run(*args, "--timeunit", "min", rc=2)
    check(f"{name}: bad --timeunit refused", "unknown time unit 'min' (valid: ns, us, ms, s)" in out, out)
    out = run(*args, "--name-width", "5", rc=2)
    check(f"{name}: --name-width 5 refused", "from 10 to 1000000, or full" in out, out)
    out = run(*args, "--name-width", "wide", rc=2)
    check(f"{name}: --name-width wide refused", "is not a name width" in out, out)
    # --timeunit us: every time column in us, table and csv alike.
    table = run(*args, "--timeunit", "us")
    csv_us = run(*args, "--timeunit", "us", "--format", "csv")
    check(f"{name}: --timeunit us in the table", "(us)" in table and "(ns)" not in table and "(ms)" not in table, table)
    check(f"{name}: --timeunit us in csv", "(us)" in csv_us and "(ns)" not in csv_us.split("\n")[0], csv_us)
    # The layout options leave csv and json as they were.
    for fmt in ("csv", "json"):
        plain = run(*args, "--format", fmt)
        laid = run(*args, "--format", fmt, "--name-width", "12")
        check(f"{name}: --name-width leaves {fmt} alone", plain == laid, laid)
    # --name-width N: no text cell wider than N; full: names whole.
    narrow = run(*args, "--name-width", "24")
    full = run(*args, "--name-width", "full")
    check(f"{name}: --name-width full is at least as wide", max(map(len, full.split("\n"))) >= max(map(len, narrow.split("\n"))), full)

# Units per column in the table; raw ns in csv.
table = run("stats", cnn, "-r", "cuda_gpu_kern_sum")
check("kern_sum table: Total Time scaled", "Total Time (ms)" in table or "Total Time (µs)" in table, table)
check("kern_sum table: no raw ns", "Total Time (ns)" not in table, table)
check("kern_sum csv: raw ns", "Total Time (ns)" in run("stats", cnn, "-r", "cuda_gpu_kern_sum", "--format", "csv"))
op = run("stats", torch_db, "-r", "op_sum")
check("op_sum table: CPU Total scaled", "CPU Total (ns)" not in op and "CPU Total (" in op, op)
md = run("stats", cnn, "-r", "cuda_gpu_kern_sum", "--format", "markdown")
check("markdown: scaled too", "Total Time (ns)" not in md and "| Total Time (" in md, md)

# Long kernel names: full prints them whole, the default cuts at 80 with "…" and keeps them apart.
full = run("summary", cnn, "-r", "cuda_gpu_kern_sum", "--name-width", "full")
long_names = [l for l in full.split("\n") if len(l) > 200]
check("summary --name-width full: names longer than 80 whole", long_names, full)
cut = run("summary", cnn, "-r", "cuda_gpu_kern_sum")
names = [l.split("  ")[-1] for l in cut.split("\n")[4:] if "…" in l]
check("summary: long names cut with …", names, cut)
check("summary: cut names stay different", len(names) == len(set(names)), "\n".join(names))

# kernels: short metric headers in the table, metric names in csv.
table = run(*commands["kernels"])
check("kernels table: short headers", "DRAM Read (" in table and "dram__bytes_read.sum" not in table, table)
csv_k = run(*commands["kernels"], "--format", "csv")
check("kernels csv: metric names", "dram__bytes_read.sum (bytes)" in csv_k.split("\n")[0], csv_k)
check("kernels --list-sets: the Header column", "DRAM Read" in run("kernels", "--list-sets"))
print(f"table layout: {checked} checks passed")
PY
