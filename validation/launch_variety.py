#!/usr/bin/env python3
"""What tracing adds to a kernel launch, by kind of launch: untraced against `gpuscope trace`.

Runs build/bin/launch_variety (C++: one kernel or 64 in turn, 8 B or 1 KiB of parameters, one
thread or 1,024 blocks of 256) and this file's own PyTorch loop (--torch-child: 40 blocks of 200
x.add_(1) on 32 elements, and of five in-place operators in turn, each block timed, then
synchronized; and x.add_(1) onto an idle GPU, torch_add_idle_gpu: a synchronize before each call,
the call alone timed, as most launches of a CPU-bound training step find the GPU; launch_variety's
one_small_idle_gpu is the same for a bare launch) as separate processes, untraced and under
`gpuscope trace -q`, alternating, --rounds rounds. For each variant and statistic (each process's
fastest block, median block, mean) it prints the median over processes untraced and traced, the
difference, and the processes' range.
docs/performance.md ("Why the median of the processes' fastest blocks") has a run.

Usage: launch_variety.py [--build BUILD] [--rounds 4] [--taskset CPUS] [--out FILE.json]
Exit status: 0, or 1 when a process failed (its output is printed).
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def torch_child():
    import torch
    x = torch.zeros(32, device="cuda")
    y = torch.ones(4096, device="cuda")
    mix = [lambda: x.add_(1), lambda: x.mul_(1.0), lambda: y.relu_(), lambda: y.sigmoid_(), lambda: y.abs_()]
    variants = {"torch_add_": lambda i: x.add_(1), "torch_mix5": lambda i: mix[i % 5]()}
    for f in variants.values():
        for i in range(3000):
            f(i)
    torch.cuda.synchronize()
    blocks = {k: [] for k in variants}
    for _ in range(40):
        for k, f in variants.items():
            t0 = time.perf_counter_ns()
            for i in range(200):
                f(i)
            blocks[k].append((time.perf_counter_ns() - t0) / 200)
            torch.cuda.synchronize()
        idle_ns = 0
        for _ in range(200):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            x.add_(1)
            idle_ns += time.perf_counter_ns() - t0
        blocks.setdefault("torch_add_idle_gpu", []).append(idle_ns / 200)
    n = 3000 + 40 * 200  # calls of each loop; x.add_(1) is all of the first and every fifth of the second
    expected = n + n // 5 + 40 * 200  # and every call onto the idle GPU
    if int(x[0].item()) != expected:
        print(f"launch_variety: x = {x[0].item()}, expected {expected}", file=sys.stderr)
        return 1
    for k, v in blocks.items():
        print(f"RESULT {k} min={min(v):.0f} median={statistics.median(v):.0f} mean={statistics.mean(v):.0f}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--taskset", default="", help="pin every process to these CPUs (taskset -c)")
    p.add_argument("--out", help="also write the table as JSON here")
    p.add_argument("--torch-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.torch_child:
        return torch_child()
    build = Path(args.build).resolve()
    gs = str(build / "bin" / "gpuscope")
    programs = [[str(build / "bin" / "launch_variety")], [sys.executable, __file__, "--torch-child"]]
    pin = ["taskset", "-c", args.taskset] if args.taskset else []
    seen = collections.defaultdict(lambda: collections.defaultdict(list))
    failed = False
    with tempfile.TemporaryDirectory(prefix="gpuscope-variety-") as tmp:
        for _ in range(args.rounds):
            for mode in ("untraced", "traced"):
                for prog in programs:
                    cmd = pin + (prog if mode == "untraced" else
                                 [gs, "trace", "-o", os.path.join(tmp, "t"), "-f", "-q", "--", *prog])
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                    if r.returncode != 0:
                        failed = True
                        print(f"{mode} {' '.join(prog)}: exit {r.returncode}\n{r.stdout}{r.stderr}", file=sys.stderr)
                        continue
                    for line in r.stdout.splitlines():
                        parts = line.split()
                        if len(parts) >= 3 and parts[0] == "RESULT":
                            for kv in parts[2:]:
                                k, v = kv.split("=")
                                seen[(parts[1], k)][mode].append(float(v))
    rows = []
    print(f"{'variant':14s} {'stat':6s} {'untraced':>9s} {'traced':>9s} {'added':>7s}  ns a launch, medians over "
          f"{args.rounds} processes each (their range)")
    for (name, stat), m in sorted(seen.items()):
        a, b = m.get("untraced", []), m.get("traced", [])
        if not a or not b:
            continue
        row = {"variant": name, "stat": stat, "untraced": statistics.median(a), "traced": statistics.median(b),
               "added": statistics.median(b) - statistics.median(a), "untraced_range": [min(a), max(a)],
               "traced_range": [min(b), max(b)]}
        rows.append(row)
        print(f"{name:14s} {stat:6s} {row['untraced']:9.0f} {row['traced']:9.0f} {row['added']:7.0f}  "
              f"({min(a):.0f}-{max(a):.0f}; {min(b):.0f}-{max(b):.0f})")
    if args.out:
        Path(args.out).write_text(json.dumps({"rounds": args.rounds, "rows": rows}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
