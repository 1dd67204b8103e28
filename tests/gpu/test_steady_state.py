#!/usr/bin/env python3
"""GPU test: a plain `gpuscope trace` finds the steady state of a C++ loop and of resnet18 training.

The C++ loop of repeated kernels (build/bin/step_loop, 60 iterations, 3 autotuning warm-up ones)
and torchvision resnet18 training (batch 32, SGD, cuDNN autotuning; validation/steady_programs.py,
40 steps) each run under `gpuscope trace -o NAME -f -- PROGRAM` with no other flag, timing
themselves step by step. Pass when, for each (validation/steady_check.py's comparison): gpuscope
finds at least 3 steady steps, their median wall time is within 5 % of the program's own median
over the same steps, and the program's own warm-up steps are not among them.
Exit 77 (skipped) without a GPU, or, after the C++ loop passed, without torch or torchvision.
"""
import argparse
import subprocess
import sys
from pathlib import Path

import gputest as g

sys.path.insert(0, str(g.REPO / "validation"))
import steady_check as sc  # noqa: E402


def judge(c, row):
    print(f"  {row['program']}: {row['status']}; gpuscope {row.get('gs_median_ms')} ms, own "
          f"{row.get('own_median_same_ms')} ms, error {row.get('err_pct')} %; steps from {row.get('source')}; "
          f"{row.get('judged')}; matched {row.get('method')}; own warm-up {row.get('own_warmup')}, first steady "
          f"{row.get('first_steady_own_step')}; {row.get('why')}")
    c.check(row.get("gs_steady", 0) >= 3, f"{row['program']}: at least 3 steady steps found", row.get("gs_steady"))
    err = row.get("err_pct")
    c.check(err is not None and abs(err) <= 5.0, f"{row['program']}: steady iteration within 5 % of its own clock",
            f"{err} %")
    c.check(bool(row.get("warmup_left_out")), f"{row['program']}: its own warm-up steps left out",
            f"own warm-up {row.get('own_warmup')}, first steady step {row.get('first_steady_own_step')}")


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.gpuscope_bin(args.build)
    g.example_bin(args.build, "step_loop")
    c = g.Checks("steady state on a plain gpuscope trace")
    opts = argparse.Namespace(build=str(args.build), out=str(args.scratch), python=sys.executable, timeout=200,
                              budget_s=280, min_run_s=0, steps={}, tolerance_pct=5.0, idle_points=5.0,
                              analyze_only=False)
    runner = sc.Runner(opts)
    judge(c, runner.steady("cpp"))
    probe = subprocess.run([sys.executable, "-c", "import torch, torchvision, sys; "
                            "sys.exit(0 if torch.cuda.is_available() else 3)"], capture_output=True, text=True,
                           timeout=300)
    if probe.returncode != 0:
        if c.failed:
            c.finish()
        print(f"skipped: resnet18 needs torch with CUDA and torchvision ({probe.stderr.strip()[-300:]})")
        sys.exit(g.SKIP)
    judge(c, runner.steady("resnet18"))
    for log in sorted(Path(runner.work).glob("*.log")):
        print(f"  log: {log}")
    c.finish()


if __name__ == "__main__":
    main()
