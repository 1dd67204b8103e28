#!/usr/bin/env python3
"""square_mean: three ways to square a tensor and three ways to take its mean.

On a 10000x10000 float32 CUDA tensor (torch.rand, seed 0) it times
``torch.square(a)``, ``a * a``, ``a ** 2``, ``torch.mean(a)``, ``a.mean()`` and
``a.sum() / a.numel()`` with torch.cuda.Event, after one warm-up call of each.
Every timed call sits in its own NVTX push/pop range named exactly
"torch.square", "a * a", "a ** 2", "torch.mean", "tensor.mean", "sum/numel"
(so a trace has REPS ranges of each name; warm-up calls are outside ranges).

Prints a timing table, a ``TIMING ...`` line, and a final
``RESULT reps=R square_sum=... mean=... agree=1`` line whose values do not depend
on timing, so a traced and an untraced run can be compared exactly.
Exit status 1 if the three squares or the three means disagree.
"""
import argparse
import statistics
import sys

import torch

SQUARES = [
    ("torch.square", lambda a: torch.square(a)),
    ("a * a", lambda a: a * a),
    ("a ** 2", lambda a: a ** 2),
]
MEANS = [
    ("torch.mean", lambda a: torch.mean(a)),
    ("tensor.mean", lambda a: a.mean()),
    ("sum/numel", lambda a: a.sum() / a.numel()),
]


def time_op(name, fn, a, reps):
    """Runs fn(a) reps times, each in an NVTX range `name`; returns (last result, ms list)."""
    timings = []
    result = None
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.nvtx.range_push(name)
        start.record()
        result = fn(a)
        end.record()
        torch.cuda.nvtx.range_pop()
        end.synchronize()
        timings.append(start.elapsed_time(end))
    return result, timings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reps", nargs="?", type=int, default=10, help="timed repetitions (default 10)")
    parser.add_argument("--size", type=int, default=10000, help="tensor is SIZE x SIZE (default 10000)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("square_mean: no CUDA device", file=sys.stderr)
        return 2

    torch.manual_seed(0)
    a = torch.rand(args.size, args.size, device="cuda", dtype=torch.float32)
    ops = SQUARES + MEANS
    for _, fn in ops:  # warm-up: kernel loading, allocator
        fn(a)
    torch.cuda.synchronize()

    results, rows = {}, []
    for name, fn in ops:
        results[name], ms = time_op(name, fn, a, args.reps)
        rows.append((name, statistics.median(ms), min(ms)))
    torch.cuda.synchronize()

    print(f"{'operation':<14} {'median ms':>10} {'min ms':>10}")
    for name, med, low in rows:
        print(f"{name:<14} {med:>10.4f} {low:>10.4f}")
    print("TIMING " + " ".join(f"{name.replace(' ', '')}={med:.4f}ms" for name, med, _ in rows))

    squares = [results[name] for name, _ in SQUARES]
    means = [results[name] for name, _ in MEANS]
    squares_agree = all(torch.allclose(squares[0], s) for s in squares[1:])
    means_agree = all(torch.allclose(means[0], m, rtol=1e-5, atol=0) for m in means[1:])
    square_sum = squares[0].double().sum().item()
    mean_values = [m.item() for m in means]
    print(f"means: {', '.join(f'{name}={v:.9g}' for (name, _), v in zip(MEANS, mean_values))}")
    agree = int(squares_agree and means_agree)
    print(f"RESULT reps={args.reps} size={args.size} square_sum={square_sum:.6f} "
          f"mean={mean_values[0]:.9g} mean_tensor={mean_values[1]:.9g} "
          f"mean_sum_numel={mean_values[2]:.9g} agree={agree}")
    if not agree:
        print("square_mean: results disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
