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

--split rotates five variants instead of two, to say where the wrapper's in-step cost goes:
the original __call__; a bare pass-through Python function (the cost of one more Python frame
with *args/**kwargs); gpuscope's wrapper with its edges into the observer's scratch sink (the
wrapper's own Python work, exactly as its calibration at exit times it); the installed wrapper
(the ring writes on top); and the original __call__ with global forward pre/post hooks writing
the same edges into the scratch sink (the route without a wrapper). Each step's forward is also
timed alone on the CPU (model(images) returns once its kernels are launched). One line
``SPLIT variant=V ms=M added_ms=A per_call_us=U forward_cpu_ms=F forward_added_us_per_call=G``
per variant (against the original; module calls per step counted on the first step).
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
    parser.add_argument("--split", action="store_true", help="five variants: where the wrapper's cost goes")
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
    step, forward_s = make_step(*resnet_train.make_training(torchvision))
    if args.split:
        return split(args, step, forward_s, wrapped, original)
    times = {True: [], False: []}
    for i in range(args.warmup + args.steps):
        traced = i % 2 == 0
        nn.Module.__call__ = wrapped if traced else original
        t0 = time.perf_counter()
        value = step()
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


def make_step(model, optimizer, loss_fn, images, labels):
    """(step, forward_s): step() runs one training step and returns its loss after the step's GPU
    work (loss.item()); forward_s[0] is then its forward's CPU time alone in seconds (model(images)
    returns once its kernels are launched, not waited for)."""
    forward_s = [0.0]

    def step():
        optimizer.zero_grad(set_to_none=True)
        t = time.perf_counter()
        out = model(images)
        forward_s[0] = time.perf_counter() - t
        loss = loss_fn(out, labels)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step, forward_s


def split(args, step, forward_s, wrapped, original):
    site = sys.modules.get("sitecustomize")
    observer = site._observer(torch) if site is not None and hasattr(site, "_observer") else None
    if observer is None or not hasattr(site, "_module_call_wrapper"):
        print("module_cost: --split needs gpuscope's observer (gpuscope trace --pytorch=ops,modules)", file=sys.stderr)
        return 2

    def passthrough(self, *a, **k):
        return original(self, *a, **k)
    scratch = site._module_call_wrapper(torch, original, lambda text: 1, observer.scratch_begin, observer.scratch_end)
    variants = {"original": original, "passthrough": passthrough, "wrapper_scratch": scratch, "wrapper": wrapped,
                "hooks_scratch": original}
    calls = [0]
    hooks = []  # the global forward hooks of "hooks_scratch", registered only while it runs

    def pre_hook(module, inputs):
        observer.scratch_begin(1)

    def post_hook(module, inputs, output):
        observer.scratch_end()

    def use(name):
        nn.Module.__call__ = variants[name]
        while hooks:
            hooks.pop().remove()
        if name == "hooks_scratch":
            hooks.append(nn.modules.module.register_module_forward_pre_hook(pre_hook))
            hooks.append(nn.modules.module.register_module_forward_hook(post_hook))

    def counting(self, *a, **k):
        calls[0] += 1
        return original(self, *a, **k)

    nn.Module.__call__ = counting
    step()
    names = list(variants)
    times = {k: [] for k in names}
    forwards = {k: [] for k in names}
    for i in range(args.warmup + args.steps):
        order = names[i % len(names):] + names[:i % len(names)]  # rotated each round
        for name in order:
            use(name)
            step()  # untimed: the interpreter's caches after the switch
            t0 = time.perf_counter()
            value = step()
            if i >= args.warmup:
                times[name].append(time.perf_counter() - t0)
                forwards[name].append(forward_s[0])
    use("wrapper")
    if value != value:
        print("module_cost: loss is not finite", file=sys.stderr)
        return 1
    base = statistics.median(times["original"]) * 1e3
    fbase = statistics.median(forwards["original"]) * 1e3
    print(f"module_cost --split: {args.steps} rounds of {len(names)} variants, {calls[0]} module calls per step")
    for name in names:
        ms = statistics.median(times[name]) * 1e3
        fms = statistics.median(forwards[name]) * 1e3
        print(f"SPLIT variant={name} ms={ms:.4f} added_ms={ms - base:.4f} "
              f"per_call_us={(ms - base) * 1e3 / max(1, calls[0]):.3f} forward_cpu_ms={fms:.4f} "
              f"forward_added_us_per_call={(fms - fbase) * 1e3 / max(1, calls[0]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
