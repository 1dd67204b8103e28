#!/usr/bin/env python3
"""Overhead benchmark: how much slower programs run under gpuscope trace (and torch.profiler).

Benchmarks (each program times itself and prints a RESULT line, so tool start-up, Python
import and trace import/writing are excluded from the per-op numbers):
  launch_loop  build/bin/launch_loop 20000              us_per_launch  untraced | gpuscope
  add_loop     examples/pytorch/add_loop.py 20000       us_per_op      untraced | gpuscope | torch.profiler
  cnn_train    examples/pytorch/cnn_train.py --steps 50 ms_per_step    untraced | gpuscope | torch.profiler
               (--no-profiler-range in every variant, so all time the same steps)
Variants alternate within each round (A B C A B C ...), --rounds rounds (default 3), so
drift (clocks, other load) spreads over all variants. Reports the median per variant and
its overhead vs the untraced median, as OUT.md and OUT.json. Exit status 1 if any run
failed (the others are still reported).
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = [sys.executable]


def benchmarks(build, tmp, args):
    """[(name, unit, RESULT key, {variant: argv})] in run order."""
    gs = str(build / "bin" / "gpuscope")
    launch = [str(build / "bin" / "launch_loop"), str(args.launches)]
    add = PY + [str(REPO / "examples/pytorch/add_loop.py"), str(args.adds)]
    cnn = PY + [str(REPO / "examples/pytorch/cnn_train.py"), "--steps", str(args.cnn_steps),
                "--warmup", "5", "--no-profiler-range"]

    def traced(name, cmd, *opts):
        return [gs, "trace", "-o", str(tmp / name), "--force-overwrite", *opts, "--", *cmd]

    # "gpuscope -t nvtx": the collector injected and running, CUPTI activity off: the
    # difference to "gpuscope" is what CUPTI's kernel and API records cost.

    return [
        ("launch_loop", "us/launch", "us_per_launch",
         {"untraced": launch, "gpuscope": traced("launch_loop", launch),
          "gpuscope -t nvtx": traced("launch_loop_nvtx", launch, "-t", "nvtx")}),
        ("add_loop", "us/op", "us_per_op",
         {"untraced": add, "gpuscope": traced("add_loop", add),
          "gpuscope -t nvtx": traced("add_loop_nvtx", add, "-t", "nvtx"),
          "torch.profiler": add + ["--torch-profiler"]}),
        ("cnn_train", "ms/step", "ms_per_step",
         {"untraced": cnn, "gpuscope": traced("cnn_train", cnn), "torch.profiler": cnn + ["--torch-profiler"]}),
    ]


def run_once(cmd, key, timeout):
    """Runs cmd; returns (value of RESULT key, wall seconds, error text or None)."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, PYTHONUNBUFFERED="1"))
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0, f"timed out after {timeout} s"
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return None, wall, f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[-400:]}"
    for line in reversed(r.stdout.splitlines()):
        m = re.search(rf"^RESULT .*\b{key}=([0-9.eE+-]+)", line)
        if m:
            return float(m.group(1)), wall, None
    return None, wall, f"no RESULT {key}= line in output: {r.stdout.strip()[-400:]}"


def gpu_name():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def median_or_none(values):
    return statistics.median(values) if values else None


def one_line(text):
    """The last lines of an error, joined on one line for a markdown list."""
    return " / ".join(line.strip() for line in text.strip().splitlines()[-3:]).replace("`", "'")


def to_markdown(report):
    lines = [f"# gpuscope overhead ({report['gpu']})", "",
             f"{report['rounds']} rounds, variants alternating; median of the per-op times each "
             "program measured itself. Wall s = whole command, including start-up and trace writing.", "",
             "| benchmark | variant | median | unit | vs untraced | runs | median wall s |",
             "|---|---|---:|---|---:|---|---:|"]
    for bench in report["benchmarks"]:
        for variant, v in bench["variants"].items():
            med = "failed" if v["median"] is None else f"{v['median']:.3f}"
            over = "" if v["overhead_pct"] is None else f"{v['overhead_pct']:+.1f} %"
            runs = ", ".join(f"{x:.3f}" for x in v["values"])
            if v["errors"]:
                runs += f" ({len(v['errors'])} failed)"
            if v["skipped"]:
                runs += f" ({v['skipped']} skipped: time budget)"
            wall = "" if v["wall_s_median"] is None else f"{v['wall_s_median']:.1f}"
            lines.append(f"| {bench['name']} | {variant} | {med} | {bench['unit']} | {over} | {runs} | {wall} |")
    errors = [(b["name"], var, e) for b in report["benchmarks"] for var, v in b["variants"].items() for e in v["errors"]]
    if errors:
        seen = {}
        for b, var, e in errors:  # the same error in every round is listed once, with a count
            seen[(b, var, one_line(e))] = seen.get((b, var, one_line(e)), 0) + 1
        lines += ["", "## Failed runs", ""] + [f"- {b} / {var} ({n}x): `{e}`" for (b, var, e), n in seen.items()]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(REPO / "build"), help="gpuscope build dir")
    parser.add_argument("--out", default="overhead", help="writes OUT.json and OUT.md")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--launches", type=int, default=20000)
    parser.add_argument("--adds", type=int, default=20000)
    parser.add_argument("--cnn-steps", type=int, default=50)
    parser.add_argument("--only", nargs="*", help="benchmark names to run (default all)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per run")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="start no run after this many seconds; the rest are reported as skipped")
    args = parser.parse_args()
    build = Path(args.build).resolve()

    with tempfile.TemporaryDirectory(prefix="gpuscope-overhead-") as tmp:
        plan = [b for b in benchmarks(build, Path(tmp), args) if not args.only or b[0] in args.only]
        results = {name: {var: {"values": [], "walls": [], "errors": [], "skipped": 0} for var in variants}
                   for name, _, _, variants in plan}
        started = time.perf_counter()
        for rnd in range(1, args.rounds + 1):
            for name, unit, key, variants in plan:
                for variant, cmd in variants.items():
                    slot = results[name][variant]
                    if args.budget_s is not None and time.perf_counter() - started > args.budget_s:
                        slot["skipped"] += 1
                        print(f"round {rnd} {name:12s} {variant:15s} skipped (time budget {args.budget_s:.0f} s)")
                        continue
                    value, wall, error = run_once(cmd, key, args.timeout)
                    slot["walls"].append(wall)
                    if error:
                        slot["errors"].append(error)
                        print(f"round {rnd} {name:12s} {variant:15s} FAILED ({error[:200]})", flush=True)
                        print(f"    $ {shlex.join(cmd)}", flush=True)
                    else:
                        slot["values"].append(value)
                        print(f"round {rnd} {name:12s} {variant:15s} {value:10.3f} {unit:10s} wall {wall:6.1f} s",
                              flush=True)

    report = {"gpu": gpu_name(), "rounds": args.rounds, "benchmarks": []}
    for name, unit, key, variants in plan:
        base = median_or_none(results[name]["untraced"]["values"])
        entry = {"name": name, "unit": unit, "key": key, "commands": variants, "variants": {}}
        for variant in variants:
            slot = results[name][variant]
            med = median_or_none(slot["values"])
            over = None if med is None or not base else (med / base - 1.0) * 100.0
            entry["variants"][variant] = {"values": slot["values"], "median": med, "overhead_pct": over,
                                          "wall_s": slot["walls"], "wall_s_median": median_or_none(slot["walls"]),
                                          "errors": slot["errors"], "skipped": slot["skipped"]}
        report["benchmarks"].append(entry)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    md = to_markdown(report)
    out.with_suffix(".md").write_text(md)
    print("\n" + md)
    failed = any(v["errors"] for b in report["benchmarks"] for v in b["variants"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
