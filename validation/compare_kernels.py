#!/usr/bin/env python3
"""Compares kernel names and counts seen by torch.profiler (torch_profiler_window.py's JSON)
with those in a gpuscope trace, and writes a markdown table.

Names are matched exactly first, then after normalising (whitespace collapsed, a leading
'void ' dropped). Rows: name | torch count | gpuscope count | match ('yes', 'count differs',
'only torch', 'only gpuscope') | torch avg (µs, key_averages() self CUDA total / count) |
gpuscope avg (µs, cuda_gpu_kern_sum's Avg) | difference (%). The two come from different
runs of the same program (one CUPTI client per process), so averages differ by run-to-run
noise; the summary gives how many names agree within 1 % and the difference of the total
GPU time. Exit status 0 when every name matches with equal counts, 1 otherwise (the table
says where), 2 when an input cannot be read.
"""
import argparse
import json
import re
import sqlite3
import sys
from pathlib import Path


def normalise(name):
    name = re.sub(r"\s+", " ", name or "").strip()
    return name[5:] if name.startswith("void ") else name


def merge(*sources):
    """{key: [display name, value of source 1, value of source 2, ...]} keyed by normalised
    name; each source is a {name: number} dict, missing values are 0."""
    rows = {}
    for index, values in enumerate(sources, start=1):
        for name, value in values.items():
            row = rows.setdefault(normalise(name), [name] + [0] * len(sources))
            row[index] += value
    return rows


def short(name, width=110):
    name = name.replace("|", "\\|")
    return name if len(name) <= width else name[: width - 3] + "..."


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", required=True, help="JSON from validation/torch_profiler_window.py")
    parser.add_argument("--trace", required=True, help="gpuscope trace (.sqlite)")
    parser.add_argument("--out", required=True, help="markdown file to write")
    args = parser.parse_args()
    try:
        torch_report = json.loads(Path(args.torch).read_text())
        con = sqlite3.connect(f"file:{args.trace}?mode=ro", uri=True)
        gs_counts = dict(con.execute("SELECT name, COUNT(*) FROM v_kernels GROUP BY name").fetchall())
        gs_time_us = {n: t / 1e3 for n, t in con.execute(
            "SELECT name, SUM(end_ns - start_ns) FROM v_kernels GROUP BY name").fetchall()}
        windows = con.execute("SELECT COUNT(*) FROM capture_windows").fetchone()[0]
    except (OSError, ValueError, sqlite3.Error) as e:
        print(f"compare_kernels: cannot read inputs: {e}", file=sys.stderr)
        return 2

    torch_time = torch_report.get("key_averages_self_cuda_us") or torch_report.get("kernel_time_us", {})
    rows = merge(torch_report.get("kernels", {}), gs_counts, torch_time, gs_time_us)
    table = []
    for _, (name, t, g, tt, gt) in sorted(rows.items(), key=lambda kv: (-max(kv[1][1], kv[1][2]), kv[0])):
        match = "yes" if t == g else "only gpuscope" if t == 0 else "only torch" if g == 0 else "count differs"
        t_avg = tt / t if t and tt else None
        g_avg = gt / g if g else None
        diff = (g_avg - t_avg) / t_avg * 100 if t_avg and g_avg else None
        table.append((name, t, g, match, t_avg, g_avg, diff, tt, gt))
    matched = sum(1 for r in table if r[3] == "yes")
    t_total, g_total = sum(r[1] for r in table), sum(r[2] for r in table)
    lines = ["# Kernels: torch.profiler vs gpuscope (cnn_train.py steps 5-10)", "",
             f"- torch.profiler: {t_total} kernels, {sum(1 for r in table if r[1])} names "
             f"({torch_report.get('source', '?')}, torch {torch_report.get('torch_version', '?')})",
             f"- gpuscope: {g_total} kernels, {sum(1 for r in table if r[2])} names ({args.trace}, "
             f"{windows} capture window(s))",
             f"- names matching with equal counts: {matched} of {len(table)}", "",
             "| kernel | torch count | gpuscope count | match | torch avg (µs) | gpuscope avg (µs) | diff (%) |",
             "|---|---:|---:|---|---:|---:|---:|"]
    fmt = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    lines += [f"| `{short(n)}` | {t} | {g} | {m} | {fmt(ta, '.3f')} | {fmt(ga, '.3f')} | {fmt(d, '+.2f')} |"
              for n, t, g, m, ta, ga, d, _, _ in table]
    tt_total, gt_total = sum(r[7] for r in table), sum(r[8] for r in table)
    total_diff = (gt_total - tt_total) / tt_total * 100 if tt_total else None
    lines.append(f"| **total** | **{t_total}** | **{g_total}** | {'yes' if t_total == g_total else 'no'} | "
                 f"{tt_total:.1f} (sum) | {gt_total:.1f} (sum) | {fmt(total_diff, '+.2f')} |")
    diffs = [abs(r[6]) for r in table if r[6] is not None]
    lines += ["", f"- average time per kernel name within 1 %: {sum(d <= 1 for d in diffs)} of {len(diffs)}; "
              f"within 3 %: {sum(d <= 3 for d in diffs)}; median |difference| "
              f"{sorted(diffs)[len(diffs) // 2] if diffs else float('nan'):.2f} %",
              f"- total GPU time of the kernels: torch.profiler {tt_total:.1f} µs, gpuscope {gt_total:.1f} µs "
              f"({fmt(total_diff, '+.2f')} %)"]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:6] + lines[-2:]))
    return 0 if matched == len(table) and table else 1


if __name__ == "__main__":
    sys.exit(main())
