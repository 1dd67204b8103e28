#!/usr/bin/env python3
"""Overhead benchmark: how much slower programs run under gpuscope trace, torch.profiler and nsys.

Workloads (each program times itself and prints a RESULT line, so tool start-up, Python
import and trace import/writing are excluded from the per-op numbers):
  launch_loop  build/bin/launch_loop 20000                        us_per_launch
  add_loop     examples/pytorch/add_loop.py 20000                 us_per_op
  resnet18     examples/pytorch/resnet_train.py (torchvision resnet18, batch 32, 3x112x112,
               SGD, 40 steps, median of steps 5..39)                 ms_per_step
  cnn_train    examples/pytorch/cnn_train.py --steps 50           ms_per_step (--only cnn_train)
  vit          examples/pytorch/vit_train.py (timm ViT-S/16, bf16, SDPA, AdamW, batch 64, 20 steps,
               median of steps 3..19)                               ms_per_step (--only vit)
Variants: untraced | gpuscope (the default trace) | torch.profiler (CPU+CUDA; Python
workloads) | with --pytorch, gpuscope trace --pytorch=ops / modules / ops,modules (Python), the
operators through gpuscope's observer (when it builds) and, as "... (nvtx route)", through
PyTorch's NVTX observer (GPUSCOPE_TORCH_OPS_ROUTE=nvtx); each one's added time (median minus
untraced median) as a share of torch.profiler's is reported beside it |
with --options, gpuscope trace --gpu-metrics and --cuda-memory-usage | nsys (`nsys profile -t cuda`, when --nsys names an nsys binary that exists) |
and with --ablation, gpuscope with one part of the collector switched off or changed at a
time (GPUSCOPE_CUDA_RECORDS, GPUSCOPE_API_CALLS, ... in the environment; collector_config.hpp):
the difference between two variants is what that part costs.
Variants alternate within each round (A B C A B C ...), --rounds rounds (default 3), so
drift (clocks, other load) spreads over all variants. Reports the median per variant, its
spread (min..max) and its overhead vs the untraced median, as OUT.md and OUT.json. Each
gpuscope trace of the last round is checked: kernels in the trace vs the program's
launches (launch_loop: exactly N + 0 lost), and records CUPTI dropped.
Exit status 1 if any run failed (the others are still reported).
"""
import argparse
import json
import os
import re
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = [sys.executable]
DEFAULT_NSYS = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys"

# --ablation: gpuscope variants, each the default trace with one thing changed (environment
# of the traced program, read by the collector; collector_config.hpp documents each).
ABLATION = {
    "gs --cuda-api all": ({}, ["--cuda-api", "all"]),
    "gs -t nvtx (CUPTI off)": ({}, ["-t", "nvtx"]),
    "gs --cuda-sync-records": ({}, ["--cuda-sync-records"]),
    "gs records=none (CUPTI attached)": ({"GPUSCOPE_CUDA_RECORDS": "none"}, []),
    "gs records=kernel": ({"GPUSCOPE_CUDA_RECORDS": "kernel"}, []),
    "gs records=kernel,runtime,driver": ({"GPUSCOPE_CUDA_RECORDS": "kernel,runtime,driver"}, []),
    "gs records=k,r,d,overhead": ({"GPUSCOPE_CUDA_RECORDS": "kernel,runtime,driver,overhead"}, []),
    "gs records=default-memcpy_peer": ({"GPUSCOPE_CUDA_RECORDS": "kernel,memcpy,memset,runtime,driver,overhead"}, []),
    "gs records=default-memset": ({"GPUSCOPE_CUDA_RECORDS": "kernel,memcpy,memcpy_peer,runtime,driver,overhead"}, []),
    "gs records=default-memcpy": ({"GPUSCOPE_CUDA_RECORDS": "kernel,memcpy_peer,memset,runtime,driver,overhead"}, []),
    "gs zero_buffers=0": ({"GPUSCOPE_ZERO_BUFFERS": "0"}, []),
    "gs --python-callsites=none": ({}, ["--python-callsites=none"]),
    "gs --pytorch=none": ({}, ["--pytorch=none"]),
}


def benchmarks(build, tmp, args):
    """[(name, unit, RESULT key, {variant: (argv, env or None, trace path or None)})] in run order."""
    gs = str(build / "bin" / "gpuscope")
    workloads = {
        "launch_loop": ("us/launch", "us_per_launch", [str(build / "bin" / "launch_loop"), str(args.launches),
                                                       "--warmup-ms", str(int(args.warmup_s * 1000))], False),
        "add_loop": ("us/op", "us_per_op", PY + [str(REPO / "examples/pytorch/add_loop.py"), str(args.adds),
                                                 "--warmup-s", str(args.warmup_s)], True),
        "resnet18": ("ms/step", "ms_per_step", PY + [str(REPO / "examples/pytorch/resnet_train.py"),
                                                    "--steps", str(args.resnet_steps)], True),
        "cnn_train": ("ms/step", "ms_per_step", PY + [str(REPO / "examples/pytorch/cnn_train.py"), "--steps",
                                                     str(args.cnn_steps), "--warmup", "5", "--no-profiler-range"],
                      True),
        "vit": ("ms/step", "ms_per_step", PY + [str(REPO / "examples/pytorch/vit_train.py"), "--steps",
                                               str(args.vit_steps)], True),
    }
    nsys = args.nsys if args.nsys and Path(args.nsys).is_file() else None
    plan = []
    for name, (unit, key, cmd, python) in workloads.items():
        if args.only and name not in args.only:
            continue
        if not args.only and name in ("cnn_train", "vit"):
            continue  # only on request: resnet18 is the default training workload

        def traced(tag, *opts):
            path = tmp / f"{name}-{tag}"
            return [gs, "trace", "-o", str(path), "--force-overwrite", *opts, "--", *cmd], path

        variants = {"untraced": (cmd, None, None)}
        argv, path = traced("gs")
        variants["gpuscope"] = (argv, None, path)
        if python:
            variants["torch.profiler"] = (cmd + ["--torch-profiler"], None, None)
        if nsys:
            variants["nsys"] = ([nsys, "profile", "-t", "cuda", "-o", str(tmp / f"{name}-nsys"),
                                 "--force-overwrite", "true", *cmd], None, None)
        if python and args.pytorch:
            for opt in ("ops", "modules", "ops,modules"):
                argv, path = traced(f"pt-{opt.replace(',', '-')}", f"--pytorch={opt}")
                variants[f"gpuscope --pytorch={opt}"] = (argv, None, path)
                argv, path = traced(f"pt-{opt.replace(',', '-')}-nvtx", f"--pytorch={opt}")
                variants[f"gpuscope --pytorch={opt} (nvtx route)"] = (argv, {"GPUSCOPE_TORCH_OPS_ROUTE": "nvtx"}, path)
        if args.options:
            for opt in ("--gpu-metrics", "--cuda-memory-usage"):
                argv, path = traced(f"opt{opt.replace('-', '_')}", opt)
                variants[f"gpuscope {opt}"] = (argv, None, path)
        if args.ablation:
            for i, (variant, (env, opts)) in enumerate(ABLATION.items()):
                argv, path = traced(f"ab{i}", *opts)
                variants[variant] = (argv, env, path)
        plan.append((name, unit, key, variants))
    return plan


def run_once(cmd, key, timeout, extra_env=None):
    """Runs cmd in a process group of its own; returns (value of RESULT key, wall seconds,
    error text or None, the RESULT line or ""). A run that printed its RESULT line but did not exit in time (nsys
    turning its capture into a report after the program ended) keeps its value."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1", **(extra_env or {})))
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    value, result = None, ""
    for line in reversed((stdout or "").splitlines()):
        m = re.search(rf"^RESULT .*\b{key}=([0-9.eE+-]+)", line)
        if m:
            value, result = float(m.group(1)), line
            break
    if value is not None and (timed_out or proc.returncode == 0):
        return value, wall, None, result
    if timed_out:
        return None, wall, f"timed out after {timeout} s", result
    if proc.returncode != 0:
        return None, wall, f"exit {proc.returncode}: {(stderr or stdout).strip()[-400:]}", result
    return None, wall, f"no RESULT {key}= line in output: {stdout.strip()[-400:]}", result


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


def trace_check(path, launches=None):
    """Facts of a gpuscope trace (path without .sqlite): kernels, API calls, kernels with
    their launch call, records lost. None when the trace is missing."""
    db = Path(str(path) + ".sqlite")
    if not db.is_file():
        return None
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        facts = {
            "kernels": q("SELECT COUNT(*) FROM kernels"),
            "api_calls": q("SELECT COUNT(*) FROM api_calls"),
            "kernels_with_launch_call": q(
                "SELECT COUNT(*) FROM kernels k WHERE EXISTS (SELECT 1 FROM api_calls a "
                "WHERE a.pid = k.pid AND a.correlation_id = k.correlation_id)"),
            "data_loss": q("SELECT COALESCE(SUM(count), 0) FROM data_loss WHERE severity = 'data_loss'"),
        }
        # --pytorch: operator calls recorded, and the observer's measured cost per call (meta; absent
        # on the NVTX route, so it also says which route recorded them).
        facts["torch_ops"] = q("SELECT COUNT(*) FROM torch_ops")
        cost = con.execute("SELECT value FROM meta WHERE key = 'tracer_torch_op_cost_ns'").fetchone()
        facts["observer_ns_per_op"] = float(cost[0]) if cost else None
        top = con.execute("SELECT s.value, COUNT(*) FROM api_calls a JOIN strings s ON s.id = a.name_id "
                          "GROUP BY s.value ORDER BY COUNT(*) DESC LIMIT 12").fetchall()
        facts["top_api_calls"] = [f"{n} {c}" for n, c in top]
    except sqlite3.Error as e:
        facts = {"error": str(e)}
    finally:
        con.close()
    if launches is not None:
        facts["expected_kernels"] = launches
    return facts


def to_markdown(report):
    lines = [f"# gpuscope overhead ({report['gpu']})", "",
             f"{report['rounds']} rounds, variants alternating"
             + (f", every run pinned to CPUs {report['taskset']}" if report.get("taskset") else "")
             + "; median (and min..max) of the per-op times each "
             "program measured itself. Paired: the median over rounds of each run's ratio to the same round's "
             "run of untraced (and, for gpuscope with options, of plain gpuscope), which cancels a machine drift "
             "between rounds. Wall s = whole command, including start-up and trace writing.", "",
             "| benchmark | variant | median | unit | vs untraced | paired | added / torch.profiler's added | "
             "min..max | runs | median wall s |",
             "|---|---|---:|---|---:|---:|---:|---|---|---:|"]
    for bench in report["benchmarks"]:
        for variant, v in bench["variants"].items():
            med = "failed" if v["median"] is None else f"{v['median']:.3f}"
            over = "" if v["overhead_pct"] is None else f"{v['overhead_pct']:+.1f} %"
            spread = f"{min(v['values']):.3f}..{max(v['values']):.3f}" if v["values"] else ""
            runs = ", ".join(f"{x:.3f}" for x in v["values"])
            if v["errors"]:
                runs += f" ({len(v['errors'])} failed)"
            if v["skipped"]:
                runs += f" ({v['skipped']} skipped: time budget)"
            wall = "" if v["wall_s_median"] is None else f"{v['wall_s_median']:.1f}"
            paired = "; ".join(f"{pct:+.1f} % vs {ref}" for ref, pct in v.get("paired_pct", {}).items())
            share = "" if v.get("added_of_torch_profiler") is None else f"{v['added_of_torch_profiler']:.2f}"
            lines.append(f"| {bench['name']} | {variant} | {med} | {bench['unit']} | {over} | {paired} | {share} | "
                         f"{spread} | {runs} | {wall} |")
    checks = [(b["name"], var, v["trace"]) for b in report["benchmarks"] for var, v in b["variants"].items()
              if v.get("trace")]
    if checks:
        lines += ["", "## What the traces hold (last round)", "",
                  "| benchmark | variant | kernels | API calls | kernels with launch call | lost | torch ops | "
                  "observer ns/op | top API calls |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for b, var, t in checks:
            if "error" in t:
                lines.append(f"| {b} | {var} | {t['error']} | | | | | | |")
                continue
            kern = f"{t['kernels']}" + (f" (launched {t['expected_kernels']})" if "expected_kernels" in t else "")
            cost = "" if t.get("observer_ns_per_op") is None else f"{t['observer_ns_per_op']:.0f}"
            lines.append(f"| {b} | {var} | {kern} | {t['api_calls']} | {t['kernels_with_launch_call']} | "
                         f"{t['data_loss']} | {t.get('torch_ops', '')} | {cost} | {'; '.join(t['top_api_calls'][:6])} |")
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
    parser.add_argument("--resnet-steps", type=int, default=40)
    parser.add_argument("--warmup-s", type=float, default=0.5,
                        help="untimed work before the timed loop of launch_loop and add_loop, so clocks settle")
    parser.add_argument("--cnn-steps", type=int, default=50)
    parser.add_argument("--vit-steps", type=int, default=20)
    parser.add_argument("--only", nargs="*", help="workloads to run: launch_loop add_loop resnet18 cnn_train vit "
                        "(default: all but cnn_train and vit)")
    parser.add_argument("--variants", nargs="*", help="variants to run (default all); untraced always runs")
    parser.add_argument("--pytorch", action="store_true",
                        help="also run gpuscope trace --pytorch=ops, =modules and =ops,modules (Python workloads)")
    parser.add_argument("--options", action="store_true",
                        help="also run gpuscope trace --gpu-metrics and --cuda-memory-usage (their cost over the "
                        "default trace: the paired ratio vs gpuscope)")
    parser.add_argument("--ablation", action="store_true", help="also run gpuscope with one part switched off at a time")
    parser.add_argument("--nsys", default=DEFAULT_NSYS, help=f"nsys binary (default {DEFAULT_NSYS}); '' = none")
    parser.add_argument("--taskset", default="",
                        help="run every variant pinned to these CPUs (taskset -c LIST), so all land on the same "
                        "cores: on the GPU machine (a VM) the same untraced program ran up to 2x slower from one "
                        "process to the next, which pinning is meant to remove")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per run")
    parser.add_argument("--nsys-timeout", type=int, default=45,
                        help="seconds per nsys run; nsys may go on turning its capture into a report after "
                        "the program printed its result, which is kept (default 45)")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="start no run after this many seconds; the rest are reported as skipped")
    args = parser.parse_args()
    build = Path(args.build).resolve()

    with tempfile.TemporaryDirectory(prefix="gpuscope-overhead-") as tmp:
        plan = benchmarks(build, Path(tmp), args)
        if args.variants:
            plan = [(n, u, k, {v: c for v, c in variants.items() if v == "untraced" or v in args.variants})
                    for n, u, k, variants in plan]
        results = {name: {var: {"values": [], "by_round": {}, "walls": [], "errors": [], "skipped": 0, "trace": None}
                          for var in variants} for name, _, _, variants in plan}
        started = time.perf_counter()
        for rnd in range(1, args.rounds + 1):
            for name, unit, key, variants in plan:
                for variant, (cmd, env, trace) in variants.items():
                    slot = results[name][variant]
                    if args.budget_s is not None and time.perf_counter() - started > args.budget_s:
                        slot["skipped"] += 1
                        print(f"round {rnd} {name:12s} {variant:34s} skipped (time budget {args.budget_s:.0f} s)")
                        continue
                    limit = min(args.timeout, args.nsys_timeout) if variant == "nsys" else args.timeout
                    pinned = ["taskset", "-c", args.taskset, *cmd] if args.taskset else cmd
                    value, wall, error, result = run_once(pinned, key, limit, env)
                    slot["walls"].append(wall)
                    if error:
                        slot["errors"].append(error)
                        print(f"round {rnd} {name:12s} {variant:34s} FAILED ({error[:200]})", flush=True)
                        print(f"    $ {shlex.join(cmd)}", flush=True)
                    else:
                        slot["values"].append(value)
                        slot["by_round"][rnd] = value
                        print(f"round {rnd} {name:12s} {variant:34s} {value:10.3f} {unit:10s} wall {wall:6.1f} s",
                              flush=True)
                    if trace is not None:
                        warm = re.search(r"\bwarmup_launches=([0-9]+)", result)
                        launched = args.launches + (int(warm.group(1)) if warm else 0) if name == "launch_loop" else None
                        slot["trace"] = trace_check(trace, launched)

    report = {"gpu": gpu_name(), "rounds": args.rounds, "taskset": args.taskset, "benchmarks": []}
    for name, unit, key, variants in plan:
        base = median_or_none(results[name]["untraced"]["values"])
        entry = {"name": name, "unit": unit, "key": key,
                 "commands": {v: {"argv": c, "env": e} for v, (c, e, _) in variants.items()}, "variants": {}}
        for variant in variants:
            slot = results[name][variant]
            med = median_or_none(slot["values"])
            over = None if med is None or not base else (med / base - 1.0) * 100.0
            # Paired: the ratio to the reference variant's run of the same round (they ran
            # back to back, so a machine drift between rounds cancels), median over rounds.
            paired = {}
            for ref in ("untraced", "gpuscope"):
                ref_runs = results[name].get(ref, {}).get("by_round", {})
                pairs = [v / ref_runs[r] - 1.0 for r, v in slot["by_round"].items() if ref_runs.get(r)]
                if variant != ref and pairs and (ref == "untraced" or variant.startswith("gpuscope --")):
                    paired[ref] = 100.0 * statistics.median(pairs)
            # What the variant adds to a step as a share of what torch.profiler adds (medians).
            prof = median_or_none(results[name].get("torch.profiler", {}).get("values", []))
            of_profiler = None
            if med is not None and base and prof is not None and prof > base and variant not in (
                    "untraced", "torch.profiler"):
                of_profiler = (med - base) / (prof - base)
            entry["variants"][variant] = {"values": slot["values"], "median": med, "overhead_pct": over,
                                          "paired_pct": paired, "added_of_torch_profiler": of_profiler,
                                          "wall_s": slot["walls"], "wall_s_median": median_or_none(slot["walls"]),
                                          "errors": slot["errors"], "skipped": slot["skipped"],
                                          "trace": slot["trace"]}
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
