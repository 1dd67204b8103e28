#!/usr/bin/env python3
"""Speed of `gpuscope stats` on a large synthetic trace, side by side with the sqlite3 shell.

The trace is written by gpuscope_make_trace (validation/make_synthetic_trace.cpp, built
beside gpuscope; through the importer's own row writer) with --launches kernel launches:
one cudaLaunchKernel API record and one kernel record per launch (so 2 x --launches kernel +
API events; default 500,000 -> 1,000,000), joined by correlation id, on 4 streams of one
GPU, 40 kernel names, an NVTX 'step' range every 100 launches with a nested 'forward'
range, a cudaStreamSynchronize + sync record ending every step and a memcpy every 1,000
launches. Times are made up but consistent (each launch call lasts 3-8 us, each kernel
starts after its launch call and after the previous kernel on its stream); the same
--launches and --seed give the same trace.

Then times, --rounds times each, alternating (median reported):
  all      gpuscope stats -r <every report> --format csv   (the whole stats job)
  each     every report on its own (its share of the total)
  sqlite3  the sqlite3 shell computing cuda_gpu_kern_sum's and cuda_api_sum's aggregates
           (COUNT, SUM, AVG, MIN, MAX per name) on the same file: the floor any SQL
           front end pays for the same GROUP BY
and checks that gpuscope's cuda_gpu_kern_sum totals equal the sqlite3 shell's.
Writes OUT.md and OUT.json. Usage: stats_speed.py --gpuscope build/bin/gpuscope --out OUT
"""
import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPORTS = ["top", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
           "nvtx_sum", "nvtx_gpu_proj_sum", "gpu_util", "launch_overhead", "sync_wait", "memcpy_check",
           "cuda_gpu_sum"]
SQL_KERN = ("SELECT s.value, COUNT(*), SUM(k.end_ns - k.start_ns), AVG(k.end_ns - k.start_ns), "
            "MIN(k.end_ns - k.start_ns), MAX(k.end_ns - k.start_ns) FROM kernels k "
            "JOIN strings s ON s.id = k.name_id GROUP BY k.name_id ORDER BY 3 DESC;")
SQL_API = ("SELECT s.value, COUNT(*), SUM(a.end_ns - a.start_ns), AVG(a.end_ns - a.start_ns), "
           "MIN(a.end_ns - a.start_ns), MAX(a.end_ns - a.start_ns) FROM api_calls a "
           "JOIN strings s ON s.id = a.name_id GROUP BY a.name_id ORDER BY 3 DESC;")


def build_trace(path, make_trace, launches, seed=1):
    """Writes the synthetic trace with gpuscope_make_trace; returns its row counts."""
    out = subprocess.run([make_trace, path, "--launches", str(launches), "--seed", str(seed)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def kern_sum_from_csv(text):
    """cuda_gpu_kern_sum's {name: (instances, total ns)} from `gpuscope stats --format csv`: one
    table with a 'section' column (docs/output-formats.md), or one block per report."""
    rows = list(csv.reader(io.StringIO(text)))
    if rows and rows[0] and rows[0][0] == "section":
        head = rows[0]
        i, n, t = head.index("Instances"), head.index("Name"), head.index("Total Time (ns)")
        return {r[n]: (int(r[i]), int(r[t])) for r in rows[1:] if r and r[0] == "cuda_gpu_kern_sum"}
    for block in text.strip().split("\n\n"):
        rows = list(csv.reader(io.StringIO(block)))
        if rows and rows[0][:5] == ["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)"]:
            return {r[-1]: (int(r[2]), int(r[1])) for r in rows[1:]}
    return {}


def timed(cmd, stdin=None):
    t = time.perf_counter()
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[:500]}")
    return elapsed, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuscope", default=str(Path(__file__).resolve().parents[1] / "build/bin/gpuscope"))
    ap.add_argument("--make-trace", help="gpuscope_make_trace (default: beside --gpuscope)")
    ap.add_argument("--sqlite3", default="sqlite3")
    ap.add_argument("--launches", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="stats_speed")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "synthetic.sqlite")
        t = time.perf_counter()
        make_trace = args.make_trace or str(Path(args.gpuscope).parent / "gpuscope_make_trace")
        counts = build_trace(db, make_trace, args.launches)
        build_s = time.perf_counter() - t
        size_mb = os.path.getsize(db) / 1e6
        print(f"stats_speed: synthetic trace: {counts} ({size_mb:.0f} MB, built in {build_s:.1f} s)", flush=True)
        gs = [args.gpuscope, "stats", db, "--format", "csv"]
        variants = {"all": gs + ["-r", ",".join(REPORTS)],
                    "sqlite3": [args.sqlite3, "-csv", db]}
        variants.update({r: gs + ["-r", r] for r in REPORTS})
        samples = {k: [] for k in variants}
        out_all = out_sql = ""
        for rnd in range(args.rounds):
            for name, cmd in variants.items():
                s, out = timed(cmd, SQL_KERN + SQL_API if name == "sqlite3" else None)
                samples[name].append(s)
                if name == "all":
                    out_all = out
                elif name == "sqlite3":
                    out_sql = out
            print(f"stats_speed: round {rnd + 1}/{args.rounds}: all reports {samples['all'][-1]:.2f} s, "
                  f"sqlite3 shell {samples['sqlite3'][-1]:.2f} s", flush=True)

    # The same numbers: kernel totals per name from gpuscope's cuda_gpu_kern_sum vs the shell.
    shell = {row[0]: (int(row[1]), int(row[2])) for row in csv.reader(io.StringIO(out_sql)) if len(row) == 6}
    gs_k = kern_sum_from_csv(out_all)
    kern_names = {k: v for k, v in shell.items() if k.startswith("void synthetic_kernel")}
    agree = gs_k == kern_names
    med = {k: statistics.median(v) for k, v in samples.items()}
    result = {"counts": counts, "db_mb": size_mb, "rounds": args.rounds, "median_s": med,
              "samples_s": samples, "kern_sum_equals_sqlite3": agree, "cpus": os.cpu_count()}
    Path(args.out + ".json").write_text(json.dumps(result, indent=1))
    total_events = counts["kernels"] + counts["api_calls"]
    lines = [f"# gpuscope stats on {total_events:,} kernel + API events", "",
             f"Synthetic trace (gpuscope_make_trace): {counts['kernels']:,} kernels, {counts['api_calls']:,} API "
             f"calls, {counts['nvtx_ranges']:,} NVTX ranges, {counts['memcpys']:,} memcpys; {size_mb:.0f} MB. "
             f"{os.cpu_count()} CPUs; median of {args.rounds} alternating rounds.", "",
             "| what | median (s) |", "|---|---:|",
             f"| gpuscope stats, all {len(REPORTS)} reports in one call | {med['all']:.2f} |",
             f"| sqlite3 shell: cuda_gpu_kern_sum + cuda_api_sum aggregates (COUNT/SUM/AVG/MIN/MAX) | "
             f"{med['sqlite3']:.2f} |"]
    lines += [f"| gpuscope stats -r {r} | {med[r]:.2f} |" for r in REPORTS]
    lines += ["", f"cuda_gpu_kern_sum instances and totals equal the sqlite3 shell's: {'yes' if agree else 'NO'}"]
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
