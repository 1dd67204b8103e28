#!/usr/bin/env python3
"""add_loop: a launch-bound PyTorch loop, N in-place x.add_(1) on 32 elements.

Measures microseconds per op with time.perf_counter around the loop plus a final
torch.cuda.synchronize() (10 warm-up ops first, not timed). --torch-profiler runs the
same timed loop inside torch.profiler.profile(activities=[CPU, CUDA]).
Checks that every element of x ends equal to the number of adds, and prints
``RESULT ops=N us_per_op=X value=V``. Exit status 1 if x is wrong.
"""
import argparse
import contextlib
import sys
import time

import torch

WARMUP = 10


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=20000, help="timed ops (default 20000)")
    parser.add_argument("--torch-profiler", action="store_true", help="run the loop under torch.profiler")
    parser.add_argument("--warmup-s", type=float, default=0.0,
                        help="run untimed adds for this many seconds first, so CPU and GPU clocks settle (default 0)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("add_loop: no CUDA device", file=sys.stderr)
        return 2

    x = torch.zeros(32, device="cuda")
    warm = WARMUP
    for _ in range(WARMUP):
        x.add_(1)
    t_end = time.perf_counter() + args.warmup_s
    while time.perf_counter() < t_end:
        for _ in range(100):
            x.add_(1)
        warm += 100
    torch.cuda.synchronize()

    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        context = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    else:
        context = contextlib.nullcontext()
    with context:
        start = time.perf_counter()
        for _ in range(args.n):
            x.add_(1)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start

    expected = float(warm + args.n)
    ok = bool(torch.all(x == expected).item())
    us_per_op = elapsed * 1e6 / max(args.n, 1)
    mode = "torch.profiler" if args.torch_profiler else "plain"
    print(f"add_loop ({mode}): {args.n} ops in {elapsed * 1e3:.1f} ms")
    print(f"RESULT ops={args.n} us_per_op={us_per_op:.3f} value={x[0].item():.1f}")
    if not ok:
        print(f"add_loop: x is not all {expected}: {x.tolist()}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
