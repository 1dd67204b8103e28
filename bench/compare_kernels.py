#!/usr/bin/env python3
"""Compares kernel names and counts seen by torch.profiler (torch_profiler_cnn.py's JSON)
with those in a gpuscope trace, and writes a markdown table.

Names are matched exactly first, then after normalising (whitespace collapsed, a leading
'void ' dropped). Rows: name | torch count | gpuscope count | match ('yes', 'count differs',
'only torch', 'only gpuscope'). Exit status 0 when every name matches with equal counts,
1 otherwise (the table says where), 2 when an input cannot be read.
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


def merge(torch_counts, gs_counts):
    """{key: [display name, torch count, gpuscope count]} keyed by normalised name."""
    rows = {}
    for source, counts in ((1, torch_counts), (2, gs_counts)):
        for name, count in counts.items():
            row = rows.setdefault(normalise(name), [name, 0, 0])
            row[source] += count
    return rows


def short(name, width=110):
    name = name.replace("|", "\\|")
    return name if len(name) <= width else name[: width - 3] + "..."


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", required=True, help="JSON from bench/torch_profiler_cnn.py")
    parser.add_argument("--trace", required=True, help="gpuscope trace (.sqlite)")
    parser.add_argument("--out", required=True, help="markdown file to write")
    args = parser.parse_args()
    try:
        torch_report = json.loads(Path(args.torch).read_text())
        con = sqlite3.connect(f"file:{args.trace}?mode=ro", uri=True)
        gs_counts = dict(con.execute("SELECT name, COUNT(*) FROM v_kernels GROUP BY name").fetchall())
        windows = con.execute("SELECT COUNT(*) FROM capture_windows").fetchone()[0]
    except (OSError, ValueError, sqlite3.Error) as e:
        print(f"compare_kernels: cannot read inputs: {e}", file=sys.stderr)
        return 2

    rows = merge(torch_report.get("kernels", {}), gs_counts)
    table = []
    for _, (name, t, g) in sorted(rows.items(), key=lambda kv: (-max(kv[1][1], kv[1][2]), kv[0])):
        match = "yes" if t == g else "only gpuscope" if t == 0 else "only torch" if g == 0 else "count differs"
        table.append((name, t, g, match))
    matched = sum(1 for r in table if r[3] == "yes")
    t_total, g_total = sum(r[1] for r in table), sum(r[2] for r in table)
    lines = ["# Kernels: torch.profiler vs gpuscope (cnn_train.py steps 5-10)", "",
             f"- torch.profiler: {t_total} kernels, {sum(1 for r in table if r[1])} names "
             f"({torch_report.get('source', '?')}, torch {torch_report.get('torch_version', '?')})",
             f"- gpuscope: {g_total} kernels, {sum(1 for r in table if r[2])} names ({args.trace}, "
             f"{windows} capture window(s))",
             f"- names matching with equal counts: {matched} of {len(table)}", "",
             "| kernel | torch count | gpuscope count | match |", "|---|---:|---:|---|"]
    lines += [f"| `{short(n)}` | {t} | {g} | {m} |" for n, t, g, m in table]
    lines.append(f"| **total** | **{t_total}** | **{g_total}** | {'yes' if t_total == g_total else 'no'} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:6]))
    return 0 if matched == len(table) and table else 1


if __name__ == "__main__":
    sys.exit(main())
