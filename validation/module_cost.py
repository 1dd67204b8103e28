#!/usr/bin/env python3
"""What `gpuscope trace --pytorch=modules` costs a resnet18 train step, measured inside one traced process.

Run it under `gpuscope trace --pytorch=modules` (scripts/gpu-run step pytorch_cost does).
gpuscope's hook wraps nn.Module.__call__ (the original is the wrapper's __wrapped__); this
script trains torchvision resnet18 (batch 32, 3x112x112, SGD, as examples/pytorch/
resnet_train.py) and, after --warmup steps, alternates step by step between the wrapped
__call__ (module ranges recorded) and the original (none): both halves run in the same
process, under the same tracer, interleaved, so drift of the machine reaches both alike.
Each step ends with loss.item() (its GPU work done). Prints the median step time of each
half and their ratio:
``RESULT steps=N with_ms=A without_ms=B modules_pct=P``.
Exit status 2 if the hook is not installed (not run under --pytorch=modules) or no GPU.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "pytorch"))
import resnet_train  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="measured steps, half of each kind (default 200)")
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    wrapped = nn.Module.__call__
    original = getattr(wrapped, "__wrapped__", None)
    if original is None:
        print("module_cost: nn.Module.__call__ is not gpuscope's wrapper: run under gpuscope trace --pytorch=modules",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("module_cost: no CUDA device", file=sys.stderr)
        return 2
    import torchvision
    model, optimizer, loss_fn, images, labels = resnet_train.make_training(torchvision)
    times = {True: [], False: []}
    for i in range(args.warmup + args.steps):
        traced = i % 2 == 0
        nn.Module.__call__ = wrapped if traced else original
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        value = loss.item()
        if i >= args.warmup:
            times[traced].append(time.perf_counter() - t0)
    nn.Module.__call__ = wrapped
    if value != value:
        print("module_cost: loss is not finite", file=sys.stderr)
        return 1
    with_ms, without_ms = (statistics.median(times[k]) * 1e3 for k in (True, False))
    print(f"module_cost: {args.steps} steps alternating; median {with_ms:.3f} ms/step with module ranges, "
          f"{without_ms:.3f} ms without")
    print(f"RESULT steps={args.steps} with_ms={with_ms:.4f} without_ms={without_ms:.4f} "
          f"modules_pct={100.0 * (with_ms / without_ms - 1.0):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
