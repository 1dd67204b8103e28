#!/usr/bin/env python3
"""session_cost: what `gpuscope launch --session` costs a program while it does not record.

Issue 24's target: a program under `gpuscope launch --session NAME` that has not been
started (no `gpuscope start`) runs within noise of the same program untraced. Measures the
launch-bound loops the overhead tables use (launch_loop: a tiny kernel launched N times;
add_loop: N in-place PyTorch adds, when torch is importable) in three modes, alternating
rounds so drift hits every mode alike:
  untraced   the program alone
  session    under gpuscope launch --session, never started
  trace      under gpuscope trace (the cost of recording, for scale)
Reports the median time per launch/op of each mode, the session's difference to untraced,
and the noise: the spread (max - min) of the untraced rounds in % of their median. The
check passes when |session - untraced| <= max(noise, 2 %).

Usage: session_cost.py --build BUILD [--rounds 5] [--launches 200000] [--adds 100000] [--out DIR]
Writes session_cost.json to --out. Exit 1 when a check fails, 2 on a run error.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def result(stdout, key):
    for line in reversed(stdout.splitlines()):
        if line.startswith("RESULT "):
            fields = dict(t.partition("=")[::2] for t in line.split()[1:])
            return float(fields[key])
    raise RuntimeError("no RESULT line in:\n" + stdout[-2000:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--launches", type=int, default=200000)
    ap.add_argument("--adds", type=int, default=100000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    build = Path(args.build).resolve()
    gs = str(build / "bin" / "gpuscope")
    scratch = Path(tempfile.mkdtemp(prefix="gpuscope-session-cost-"))
    env = dict(os.environ, GPUSCOPE_SESSIONS_DIR=str(scratch / "sessions"))

    workloads = {"launch_loop": ("us/launch", "us_per_launch",
                                 [str(build / "bin" / "launch_loop"), str(args.launches), "--warmup-ms", "300"])}
    has_torch = subprocess.run([sys.executable, "-c", "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)"],
                               capture_output=True).returncode == 0
    if has_torch:
        workloads["add_loop"] = ("us/op", "us_per_op",
                                 [sys.executable, str(REPO / "examples/pytorch/add_loop.py"), str(args.adds),
                                  "--warmup-s", "0.3"])
    else:
        print("session_cost: no PyTorch with CUDA here: add_loop left out")

    def command(mode, target, i):
        if mode == "untraced":
            return target
        if mode == "session":
            return [gs, "launch", "--session", f"cost-{os.getpid()}-{i}", "-o", str(scratch / f"s{i}"),
                    "--force-overwrite", "--calibrate=never", "-q", "--", *target]
        return [gs, "trace", "-o", str(scratch / f"t{i}"), "--force-overwrite", "--calibrate=never", "-q", "--", *target]

    modes = ("untraced", "session", "trace")
    report, ok = {}, True
    for wname, (unit, key, target) in workloads.items():
        samples = {m: [] for m in modes}
        for rnd in range(args.rounds):
            for m in modes:
                r = subprocess.run(command(m, target, rnd), env=env, capture_output=True, text=True, timeout=600)
                if r.returncode != 0:
                    print(f"session_cost: {wname} {m} failed (exit {r.returncode}):\n{r.stderr[-2000:]}")
                    return 2
                samples[m].append(result(r.stdout, key))
        med = {m: statistics.median(v) for m, v in samples.items()}
        noise = 100 * (max(samples["untraced"]) - min(samples["untraced"])) / med["untraced"]
        diff = 100 * (med["session"] / med["untraced"] - 1)
        trace_diff = 100 * (med["trace"] / med["untraced"] - 1)
        passed = abs(diff) <= max(noise, 2.0)
        ok &= passed
        report[wname] = {"unit": unit, "samples": samples, "median": med, "untraced_spread_pct": noise,
                         "session_vs_untraced_pct": diff, "trace_vs_untraced_pct": trace_diff, "within_noise": passed}
        print(f"\n{wname} ({args.rounds} rounds, median {unit}):")
        print(f"  untraced {med['untraced']:.3f}   session (not started) {med['session']:.3f} ({diff:+.2f} %)"
              f"   trace {med['trace']:.3f} ({trace_diff:+.2f} %)")
        print(f"  untraced spread {noise:.2f} %  ->  session within noise (max(spread, 2 %)): "
              f"{'yes' if passed else 'NO'}")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "session_cost.json").write_text(json.dumps(report, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
