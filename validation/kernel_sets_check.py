#!/usr/bin/env python3
"""gpuscope kernels' metric sets side by side with Nsight Compute (ncu) on the GPU machine
(issue 16: the compute, warps and detailed sets, and the exactness of the multi-pass sol and
memory sets).

  1. `gpuscope kernels --list-sets --format csv` -> WORK/sets.csv
  2. every metric base name of the sets in `ncu --query-metrics --chip gh100` (when ncu is
     installed) -> listed as missing otherwise
  3. for each program (--programs) and set (--sets), --rounds rounds, alternating within each
     round: `gpuscope kernels --set SET --format csv -o WORK/PROGRAM-SET-rK` and
     `ncu --metrics <the same list>` on the same launches (separate processes: one CUPTI
     profiler per process), both with the same --cache-control and ncu with --clock-control
     none (gpuscope never locks clocks). Programs:
       kernel_mix       kernel_mix --only own (copy_f4, fma/dfma/hfma2 loops, transposes, tiny), 8 launches
       bench_copy       gpuscope bench copy 2^24, -k copy_vec, 5 launches
       bench_transpose  gpuscope bench transpose 2^12, -k transpose_shared, 3 launches
       resnet18         examples/pytorch/resnet_train.py --steps 2 --warmup 1, the first 20 launches
                        (after --launch-skip; needs torch and torchvision)
  4. per launch (matched by base name and order) and metric, the medians of the rounds are
     judged with kernels_check.judge: counts and bytes within 1 %, durations, percentages and
     per-cycle averages within 3 %, or within the absolute floors of kernels_check.TARGETS, or
     within the two tools' own round-to-round spread (`noise`: such passes are counted apart,
     as kernels_check does). ncu's own spread beyond the target is counted too: a value ncu
     cannot repeat within 3 % cannot be expected of gpuscope within 3 %.
  5. the verdicts on kernel_mix: fma_loop's busiest pipe should be FMA, copy_f4's top stall
     long scoreboard or LG throttle (the hand-made expectations the CPU tests assume)
Writes WORK/compare.md and WORK/compare.json, WORK = OUT/kernel_sets[-TAG]. Exit 0 when every
step passed, 1 otherwise (everything is still written).
Usage: kernel_sets_check.py --build BUILD --out OUT [--ncu PATH] [--timeout S] [--rounds N]
         [--sets S1,S2] [--programs P1,P2] [--launch-skip N] [--cache-control all|none] [--tag T]
         [--python PY]
The judging (compare_set) is unit-tested without a GPU by
tests/unit/validation/test_kernel_sets_check.py.
"""
import argparse
import csv
import json
import os
import shutil
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ next to the validation scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels_check as kc  # noqa: E402  (parse_ncu_csv, gs_launches, match_launches, judge, combine_rounds)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = ("compute", "warps", "detailed", "sol", "memory")
PROGRAMS = ("kernel_mix", "bench_copy", "bench_transpose", "resnet18")


def run(cmd, timeout, log):
    """kernels_check.run (its log written to log) as (rc, stdout, stderr, wall s)."""
    r = kc.run(cmd, timeout, log)
    return r["rc"], r["stdout"], r["stderr"], r["wall_s"]


def set_metrics(sets_csv):
    """--list-sets csv -> {set: [metric, ...]} (its section column names the set's report)."""
    out = {}
    with open(sets_csv) as f:
        for row in csv.DictReader(f):
            section = row.get("section") or ""
            out.setdefault(section.replace("metric_set_", ""), []).append(row["Metric"])
    return out


def program(name, build, python, launch_skip):
    """name -> {'cmd': argv, 'filter': regex or None, 'count': launches, 'skip': launches skipped}."""
    gs = os.path.join(build, "bin", "gpuscope")
    if name == "kernel_mix":
        return {"cmd": [os.path.join(build, "bin", "kernel_mix"), "--only", "own"], "filter": None, "count": 8,
                "skip": 0}
    if name in ("bench_copy", "bench_transpose"):  # kernels_check's bench cases
        case = name.removeprefix("bench_")
        _, kernel, count = kc.BENCH_PROGRAMS[case]
        return {"cmd": kc.bench_program(gs, case), "filter": kernel, "count": count, "skip": 0}
    if name == "resnet18":
        return {"cmd": [python, os.path.join(ROOT, "examples", "pytorch", "resnet_train.py"), "--steps", "2",
                        "--warmup", "1"], "filter": None, "count": 20, "skip": launch_skip}
    raise ValueError(f"unknown program {name!r} (one of {', '.join(PROGRAMS)})")


def gs_command(gs, prog, metric_set, stem, cache_control):
    cmd = [gs, "kernels", "--cache-control", cache_control, "--set", metric_set, "-o", stem, "-f", "--format", "csv",
           "--by", "launch", "--launch-count", str(prog["count"])]
    if prog["skip"]:
        cmd += ["--launch-skip", str(prog["skip"])]
    if prog["filter"]:
        cmd += ["-k", prog["filter"]]
    return cmd + ["--", *prog["cmd"]]


def ncu_command(ncu, prog, metrics):
    cmd = [ncu, "--metrics", ",".join(metrics), *kc.Checker.ncu_flags(), "--launch-count", str(prog["count"])]
    if prog["skip"]:
        cmd += ["--launch-skip", str(prog["skip"])]
    if prog["filter"]:
        cmd += ["--kernel-name", "regex:" + prog["filter"]]
    return cmd + prog["cmd"]


def beyond_target(metric, spread, reference):
    """True when a round-to-round spread exceeds the metric's own target (1 % / 3 % or floor)."""
    rel_pct, floor = kc.TARGETS[kc.metric_kind(metric)]
    return reference is not None and spread > max(rel_pct / 100 * abs(reference), floor)


def compare_set(metrics, gs_rounds, ncu_rounds):
    """Judges one set on one program.

    gs_rounds, ncu_rounds: per round, the launch list of each tool ([{'name', 'metrics'}] in
    launch order, as kernels_check.gs_launches / parse_ncu_csv give them). The rounds of a tool
    are combined into medians and spreads (kernels_check.combine_rounds), launches matched by
    base name and order, and each (launch, metric) judged by kernels_check.judge with noise =
    the larger of the two tools' spreads. Returns (rows, summary): rows [{'launch', 'metric',
    'kind', 'gpuscope', 'ncu', 'diff_pct', 'tolerance', 'gs_spread', 'ncu_spread', 'basis',
    'result', 'ncu_self_beyond'}], summary {'launches', 'values', 'pass_target', 'pass_noise',
    'fail', 'missing', 'ncu_self_beyond', 'only_gpuscope', 'only_ncu'}."""
    gs = kc.combine_rounds([r for r in gs_rounds if r])
    nc = kc.combine_rounds([r for r in ncu_rounds if r])
    pairs, only_gs, only_ncu = kc.match_launches(gs, nc)
    rows = []
    for label, g, n in pairs:
        for m in metrics:
            gv, nv = g["metrics"].get(m), n["metrics"].get(m)
            gsp, nsp = g.get("spread", {}).get(m, 0.0), n.get("spread", {}).get(m, 0.0)
            j = kc.judge(m, gv, nv, noise=max(gsp, nsp))
            rows.append({"launch": label, "metric": m, "kind": j["kind"], "gpuscope": gv, "ncu": nv,
                         "diff_pct": j["diff_pct"], "tolerance": j["tolerance"], "gs_spread": gsp, "ncu_spread": nsp,
                         "basis": j["basis"], "result": j["result"],
                         "ncu_self_beyond": beyond_target(m, nsp, nv) and n.get("rounds", 1) > 1})
    summary = {"launches": len(pairs), "values": len(rows),
               "pass_target": sum(r["result"] == "PASS" and r["basis"] == "target" for r in rows),
               "pass_noise": sum(r["result"] == "PASS" and r["basis"] == "noise" for r in rows),
               "fail": sum(r["result"] == "FAIL" for r in rows),
               "missing": sum(r["result"] == "MISSING" for r in rows),
               "ncu_self_beyond": sum(r["ncu_self_beyond"] for r in rows),
               "only_gpuscope": only_gs, "only_ncu": only_ncu}
    return rows, summary


def fmt(v):
    if v is None:
        return "—"
    if isinstance(v, float) and abs(v) < 1e4 and v != int(v):
        return f"{v:.4g}"
    return f"{v:,.0f}"


def verdict_checks(rows_csv, metric_set):
    """kernel_mix's hand-made expectations on gpuscope's CSV rows -> (failures, notes)."""
    fails, notes = [], []
    for r in rows_csv:
        expl = r.get("Explanation", "")
        if r.get("Name") == "fma_loop" and metric_set in ("compute", "detailed") and "busiest pipe FMA" not in expl:
            fails.append(f"fma_loop's busiest pipe is not FMA: {expl[:300]}")
        if r.get("Name") == "copy_f4" and metric_set in ("warps", "detailed") and not (
                "; long scoreboard" in expl or "; LG throttle" in expl):
            notes.append(f"copy_f4's top stall is not long scoreboard or LG throttle: {expl[:300]}")
    return fails, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ncu", default=None)
    ap.add_argument("--python", default=sys.executable, help="interpreter for resnet18 (default this one)")
    ap.add_argument("--timeout", type=float, default=150, help="seconds per process (default 150)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="runs of each tool per program and set, alternating (default 2: the spread is the noise)")
    ap.add_argument("--sets", default=",".join(SETS), help="comma list of the sets to compare")
    ap.add_argument("--programs", default="kernel_mix", help=f"comma list of {', '.join(PROGRAMS)} (default kernel_mix)")
    ap.add_argument("--launch-skip", type=int, default=0, help="resnet18: launches skipped by both tools first")
    ap.add_argument("--cache-control", choices=("all", "none"), default=kc.CACHE_CONTROL,
                    help="passed to both tools (default none; all: caches flushed before every replay pass)")
    ap.add_argument("--tag", default="", help="suffix of the work folder (kernel_sets-TAG), to keep runs apart")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="start no further program/set once the elapsed time plus the longest one so far would "
                         "pass this many seconds (0: no limit); what is left out is listed and fails the run")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    started = time.perf_counter()
    kc.CACHE_CONTROL = a.cache_control
    sets_run = [s for s in a.sets.split(",") if s]
    try:
        progs = {p: program(p, a.build, a.python, a.launch_skip) for p in a.programs.split(",") if p}
    except ValueError as e:
        ap.error(str(e))
    gs = os.path.join(a.build, "bin", "gpuscope")
    ncu = a.ncu or shutil.which("ncu") or ("/usr/local/cuda/bin/ncu" if os.path.exists("/usr/local/cuda/bin/ncu") else None)
    work = os.path.join(a.out, "kernel_sets" + (f"-{a.tag}" if a.tag else ""))
    os.makedirs(work, exist_ok=True)
    ok = True
    lines = [f"# gpuscope kernels: {', '.join(sets_run)} on {', '.join(progs)} vs ncu (--cache-control "
             f"{a.cache_control} for both tools, {a.rounds} round(s), medians; noise = the larger round-to-round "
             f"spread of the two tools)", ""]
    report = {"sets": {}, "cache_control": a.cache_control, "rounds": a.rounds}

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
        lines.append("- ncu not found: names not compared with ncu --query-metrics, values not compared with ncu")

    def write(final):
        result = "PASS" if ok else "FAIL"
        tail = ["", f"Result: {result}" if final else f"(running; so far: {result})"]
        with open(os.path.join(work, "compare.md"), "w") as f:
            f.write("\n".join(lines + table + tail) + "\n")
        with open(os.path.join(work, "compare.json"), "w") as f:
            json.dump(report, f, indent=1)
        return tail

    longest, left_out = 0.0, []
    table = ["", "| program | set | launches | values | within target | within noise | outside | missing | "
                 "ncu vs itself beyond target |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for pname, prog in progs.items():
        for s in sets_run:
            key = f"{pname}/{s}"
            elapsed = time.perf_counter() - started
            if a.budget_s and elapsed + longest > a.budget_s:
                left_out.append(key)
                continue
            t_pair = time.perf_counter()
            metrics = [m for m in sets.get(s, []) if m != "gpu__time_duration.sum"]
            entry = {"gpuscope": [], "ncu": [], "rows": []}
            report["sets"][key] = entry
            lines += ["", f"## {pname}, --set {s}", ""]
            gs_rounds, ncu_rounds = [], []
            for k in range(a.rounds):
                stem = os.path.join(work, f"{pname}-{s}-r{k}")
                rc, out, err, wall = run(gs_command(gs, prog, s, stem, a.cache_control), a.timeout, stem + ".log")
                passes = next((ln for ln in err.splitlines() if "pass" in ln and "metrics" in ln), "").strip()
                entry["gpuscope"].append({"rc": rc, "wall_s": wall, "passes_line": passes})
                lines.append(f"- round {k + 1}: gpuscope exit {rc}, {wall:.1f} s; {passes}")
                if rc != 0 or not os.path.exists(stem + ".sqlite"):
                    ok = False
                    lines.append(f"  - FAIL: {err[-400:]!r}")
                    gs_rounds.append([])
                else:
                    gsl = kc.gs_launches(stem + ".sqlite")
                    gs_rounds.append(gsl)
                    missing = sorted({m for m in sets.get(s, []) if not any(m in l["metrics"] for l in gsl)})
                    if missing:
                        ok = False
                        lines.append(f"  - FAIL: metrics with no value in any launch: {', '.join(missing)}")
                    if pname == "kernel_mix" and os.path.exists(stem + ".csv"):
                        with open(stem + ".csv") as f:
                            fails, notes = verdict_checks(list(csv.DictReader(f)), s)
                        ok = ok and not fails
                        lines += [f"  - FAIL: {x}" for x in fails] + [f"  - NOTE: {x}" for x in notes]
                if not ncu:
                    continue
                rc, out, err, nwall = run(ncu_command(ncu, prog, metrics), a.timeout, stem + ".ncu.log")
                nl = kc.parse_ncu_csv(out) if rc == 0 else []
                ncu_rounds.append(nl)
                entry["ncu"].append({"rc": rc, "wall_s": nwall, "launches": len(nl)})
                lines.append(f"  ncu exit {rc}, {nwall:.1f} s, {len(nl)} launches")
                if rc != 0 or not nl:
                    ok = False
            if not ncu:
                longest = max(longest, time.perf_counter() - t_pair)
                write(False)
                continue
            rows, summary = compare_set(metrics, gs_rounds, ncu_rounds)
            entry["rows"], entry["summary"] = rows, summary
            lines.append(f"- side by side: {summary['launches']} launches, {summary['values']} values: "
                         f"{summary['pass_target']} within target, {summary['pass_noise']} within the tools' own "
                         f"spread, {summary['fail']} outside, {summary['missing']} missing; ncu differs from itself "
                         f"beyond the target in {summary['ncu_self_beyond']}; only gpuscope "
                         f"{summary['only_gpuscope'][:4]}, only ncu {summary['only_ncu'][:4]}")
            bad = [r for r in rows if r["result"] != "PASS"]
            for r in bad[:40]:
                diff = "—" if r["diff_pct"] is None else f"{r['diff_pct']:+.2f} %"
                lines.append(f"  - {r['launch']} {r['metric']}: gpuscope {fmt(r['gpuscope'])} ncu {fmt(r['ncu'])} "
                             f"({diff}; tolerance {fmt(r['tolerance'])}; spreads gpuscope {fmt(r['gs_spread'])}, "
                             f"ncu {fmt(r['ncu_spread'])})")
            if len(bad) > 40:
                lines.append(f"  - ... {len(bad) - 40} more in compare.json")
            table.append(f"| {pname} | {s} | {summary['launches']} | {summary['values']} | {summary['pass_target']} | "
                         f"{summary['pass_noise']} | {summary['fail']} | {summary['missing']} | "
                         f"{summary['ncu_self_beyond']} |")
            ok = ok and not bad and summary["launches"] > 0
            longest = max(longest, time.perf_counter() - t_pair)
            write(False)

    if left_out:
        ok = False
        report["left_out"] = left_out
        lines += ["", f"- FAIL: not run within --budget-s {a.budget_s:.0f} s: {', '.join(left_out)}"]
    tail = write(True)
    print("\n".join(lines + table + tail))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
