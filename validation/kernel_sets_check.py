#!/usr/bin/env python3
"""gpuscope kernels' compute, warps and detailed sets on the GPU machine (issue 16, items 1-3).

The metric names of these sets were checked on a machine without a GPU against the CUPTI
host API's list for GH100 only; this script confirms them on the real chip and against ncu:

  1. `gpuscope kernels --list-sets --format csv` -> OUT/kernel_sets/sets.csv
  2. every metric base name of the sets in `ncu --query-metrics --chip gh100` (when ncu is
     installed) -> listed as missing otherwise
  3. each of compute, warps, detailed on `kernel_mix --only own` (the hand-written kernels:
     copy_f4, fma_loop, dfma_loop, hfma2_loop, transposes, tiny): gpuscope kernels -o
     OUT/kernel_sets/SET --format csv (results in SET.csv, the program's stdout in SET.log),
     with its pass count and wall time
  4. ncu --metrics (the same list) on the same launches, per launch and metric side by side:
     percentages and ratios within 3 %, or 0.5 points / 0.05 for values near 0
  5. the verdicts: fma_loop's busiest pipe should be FMA, copy_f4's top stall long
     scoreboard or LG throttle (the hand-made expectations the CPU tests assume)
Writes OUT/kernel_sets/compare.md and compare.json. Exit 0 when every step passed.
Usage: kernel_sets_check.py --build BUILD --out OUT [--ncu PATH] [--timeout S] [--launch-count N]
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels_check as kc  # noqa: E402  (parse_ncu_csv, gs_launches, match_launches)

SETS = ("compute", "warps", "detailed", "sol", "memory")


def run(cmd, timeout, log):
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except (subprocess.TimeoutExpired, OSError) as e:
        rc, out, err = None, "", str(e)
    wall = time.perf_counter() - t0
    with open(log, "w") as f:
        f.write(f"$ {' '.join(cmd)}\nexit {rc} in {wall:.2f} s\n--- stdout\n{out}\n--- stderr\n{err}\n")
    return rc, out, err, wall


def set_metrics(sets_csv):
    """--list-sets csv -> {set: [metric, ...]} (its section column names the set's report)."""
    out = {}
    with open(sets_csv) as f:
        for row in csv.DictReader(f):
            section = row.get("section") or ""
            out.setdefault(section.replace("metric_set_", ""), []).append(row["Metric"])
    return out


def close(a, b):
    if a is None or b is None:
        return False
    return abs(a - b) <= max(0.03 * abs(b), 0.5 if abs(b) > 1 else 0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ncu", default=None)
    ap.add_argument("--timeout", type=float, default=150)
    ap.add_argument("--launch-count", type=int, default=8)
    ap.add_argument("--sets", default=",".join(SETS), help="comma list of the sets to compare")
    ap.add_argument("--cache-control", choices=("all", "none"), default=kc.CACHE_CONTROL,
                    help="passed to both tools (default none; all: caches flushed before every replay pass)")
    ap.add_argument("--tag", default="", help="suffix of the work folder (kernel_sets-TAG), to keep runs apart")
    a = ap.parse_args()
    kc.CACHE_CONTROL = a.cache_control
    sets_run = [s for s in a.sets.split(",") if s]
    gs = os.path.join(a.build, "bin", "gpuscope")
    km = [os.path.join(a.build, "bin", "kernel_mix"), "--only", "own"]
    ncu = a.ncu or shutil.which("ncu") or ("/usr/local/cuda/bin/ncu" if os.path.exists("/usr/local/cuda/bin/ncu") else None)
    work = os.path.join(a.out, "kernel_sets" + (f"-{a.tag}" if a.tag else ""))
    os.makedirs(work, exist_ok=True)
    ok, lines, report = True, [f"# gpuscope kernels: {', '.join(sets_run)} on the GPU (--cache-control "
                               f"{a.cache_control} for both tools)", ""], {"sets": {}, "cache_control": a.cache_control}

    rc, out, err, _ = run([gs, "kernels", "--list-sets", "--format", "csv"], 60, os.path.join(work, "list-sets.log"))
    with open(os.path.join(work, "sets.csv"), "w") as f:
        f.write(out)
    sets = set_metrics(os.path.join(work, "sets.csv")) if rc == 0 else {}
    for s in sets_run:
        if not sets.get(s):
            ok = False
            lines.append(f"- FAIL: --list-sets has no set {s}")

    if ncu:
        rc, out, err, _ = run([ncu, "--query-metrics", "--chip", "gh100"], 120, os.path.join(work, "ncu-query.log"))
        known = {line.split()[0] for line in out.splitlines() if line.strip() and "__" in line.split()[0]}
        missing = sorted({m.split(".")[0] for s in sets_run for m in sets.get(s, [])} - known) if known else []
        report["ncu_query_missing"] = missing
        lines.append(f"- ncu --query-metrics --chip gh100: {len(known)} base names; missing from it: "
                     f"{', '.join(missing) or 'none'}")
        ok = ok and not missing
    else:
        lines.append("- ncu not found: names not compared with ncu --query-metrics")

    for s in sets_run:
        stem = os.path.join(work, s)
        cmd = [gs, "kernels", "--cache-control", a.cache_control, "--set", s, "-o", stem, "-f", "--format", "csv", "--by", "launch",
               "--launch-count", str(a.launch_count), "--", *km]
        rc, out, err, wall = run(cmd, a.timeout, stem + ".log")
        passes = next((ln for ln in err.splitlines() if "pass" in ln and "metrics" in ln), "")
        entry = {"rc": rc, "wall_s": wall, "passes_line": passes, "rows": []}
        report["sets"][s] = entry
        lines += ["", f"## --set {s}", "", f"- gpuscope: exit {rc}, {wall:.1f} s; {passes.strip()}"]
        if rc != 0 or not os.path.exists(stem + ".sqlite"):
            ok = False
            lines.append(f"- FAIL: {err[-400:]!r}")
            continue
        gsl = kc.gs_launches(stem + ".sqlite")
        missing = sorted({m for m in sets.get(s, []) if not any(m in l["metrics"] for l in gsl)})
        if missing:
            ok = False
            lines.append(f"- FAIL: metrics with no value in any launch: {', '.join(missing)}")
        with open(stem + ".csv") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            expl = r.get("Explanation", "")
            if r.get("Name") == "fma_loop" and s in ("compute", "detailed") and "busiest pipe FMA" not in expl:
                ok = False
                lines.append(f"- FAIL: fma_loop's busiest pipe is not FMA: {expl[:300]}")
            if r.get("Name") == "copy_f4" and s in ("warps", "detailed") and not (
                    "; long scoreboard" in expl or "; LG throttle" in expl):
                lines.append(f"- NOTE: copy_f4's top stall is not long scoreboard or LG throttle: {expl[:300]}")
        if not ncu:
            continue
        metrics = [m for m in sets.get(s, []) if m != "gpu__time_duration.sum"]
        ncmd = [ncu, "--metrics", ",".join(metrics), *kc.Checker.ncu_flags(), "--launch-count", str(a.launch_count),
                *km]
        rc, out, err, nwall = run(ncmd, a.timeout, stem + ".ncu.log")
        nl = kc.parse_ncu_csv(out) if rc == 0 else []
        lines.append(f"- ncu: exit {rc}, {nwall:.1f} s, {len(nl)} launches")
        pairs, only_gs, only_ncu = kc.match_launches(gsl, nl)
        bad = 0
        for label, g, n in pairs:
            for m in metrics:
                gv, nv = g["metrics"].get(m), n["metrics"].get(m)
                good = close(gv, nv)
                entry["rows"].append({"launch": label, "metric": m, "gpuscope": gv, "ncu": nv, "ok": good})
                bad += not good
        lines.append(f"- side by side: {len(pairs)} launches, {len(entry['rows'])} values, {bad} outside "
                     f"3 % (or 0.5 / 0.05 near 0); only gpuscope {only_gs[:4]}, only ncu {only_ncu[:4]}")
        for row in [r for r in entry["rows"] if not r["ok"]][:40]:
            lines.append(f"  - {row['launch']} {row['metric']}: gpuscope {row['gpuscope']} ncu {row['ncu']}")
        ok = ok and bad == 0 and bool(pairs)

    lines += ["", f"Result: {'PASS' if ok else 'FAIL'}"]
    with open(os.path.join(work, "compare.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(work, "compare.json"), "w") as f:
        json.dump(report, f, indent=1)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
