#!/usr/bin/env python3
"""What gpuscope's default step marks cost a resnet18 training step, measured inside one traced process.

Run it under a plain `gpuscope trace` (the default hooks: scripts/gpu-run step step_marks_cost
does). gpuscope's sitecustomize registers one global optimizer step post-hook when torch is
imported (a mark "gpuscope.step" per optimizer.step()) and keeps its handle
(sitecustomize.installed["steps"]). This script trains torchvision resnet18 (batch 32,
3x112x112, SGD, as examples/pytorch/resnet_train.py; each step ends with loss.item(), so the
hook's CPU time is never hidden behind the GPU) and, after --warmup steps, alternates blocks
of --block steps with the hook registered (sitecustomize._enable_steps: the same hook) and
removed (handle.remove()), --rounds rounds, the order within a round swapped every round, so
drift of the machine reaches both alike. Per block: ms/step = its wall time / --block. Prints
the median ms/step of each kind and cost % = (on - off) / off x 100, and writes OUT/step_marks_cost.
{md,json} (with marks_expected: the marks the traced process put, warm-up included, for
comparing with the trace's gpuscope.step marks).
Exit status: 0 when the cost is within --target-pct (default 1), 1 above it, 2 when not run
under gpuscope trace's default hooks or without a GPU or torchvision.

Usage: gpuscope trace -o marks -- python3 validation/step_marks_cost.py OUT [--rounds 25] [--block 20]
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "pytorch"))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="folder for step_marks_cost.md and .json")
    p.add_argument("--rounds", type=int, default=25, help="rounds of one block on and one off (default 25)")
    p.add_argument("--block", type=int, default=20, help="steps per block (default 20)")
    p.add_argument("--warmup", type=int, default=20, help="steps before measuring, hook on (default 20)")
    p.add_argument("--target-pct", type=float, default=1.0, help="largest cost judged ok, %% (default 1)")
    a = p.parse_args()
    import torch
    site = sys.modules.get("sitecustomize")
    handle = getattr(site, "installed", {}).get("steps")
    if handle is None:
        print("step_marks_cost: gpuscope's step hook is not installed: run under `gpuscope trace` with the default "
              "hooks (not --pytorch=none)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("step_marks_cost: no CUDA device", file=sys.stderr)
        return 2
    try:
        import torchvision
    except ImportError as e:
        print(f"step_marks_cost: needs torchvision ({e})", file=sys.stderr)
        return 2
    import resnet_train
    model, optimizer, loss_fn, images, labels = resnet_train.make_training(torchvision)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    marks = 0
    for _ in range(a.warmup):  # the hook on, as gpuscope trace leaves it
        value = step()
        marks += 1
    ms = {True: [], False: []}
    for r in range(a.rounds):
        for on in ((True, False) if r % 2 == 0 else (False, True)):
            if on and handle is None:
                handle = site._enable_steps(torch)
            elif not on and handle is not None:
                handle.remove()
                handle = None
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(a.block):
                value = step()
            ms[on].append((time.perf_counter() - t0) * 1e3 / a.block)
            marks += a.block if on else 0
    if handle is None:
        handle = site._enable_steps(torch)  # leave the process as gpuscope set it up
    if value != value:
        print("step_marks_cost: loss is not finite", file=sys.stderr)
        return 1
    on_ms, off_ms = statistics.median(ms[True]), statistics.median(ms[False])
    cost = 100.0 * (on_ms - off_ms) / off_ms
    ok = cost <= a.target_pct
    spread = {k: [min(v), max(v)] for k, v in (("on", ms[True]), ("off", ms[False]))}
    result = {"model": "torchvision resnet18, batch 32, 3x112x112, SGD", "device": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "rounds": a.rounds, "block_steps": a.block, "warmup_steps": a.warmup,
              "on_ms_per_step": on_ms, "off_ms_per_step": off_ms, "cost_pct": cost, "target_pct": a.target_pct,
              "pass": ok, "block_ms_min_max": spread, "blocks_on_ms": ms[True], "blocks_off_ms": ms[False],
              "marks_expected": marks}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "step_marks_cost.json").write_text(json.dumps(result, indent=1))
    lines = ["# Cost of gpuscope's default step marks (one traced process, hook on/off by blocks)", "",
             f"{result['model']} on {result['device']}, torch {result['torch']}; {a.rounds} rounds of a block of "
             f"{a.block} steps with the optimizer step hook and one without (order swapped each round), after "
             f"{a.warmup} warm-up steps; each step ends with loss.item().", "",
             "| hook | median ms/step | block min–max (ms/step) |", "|---|---|---|",
             f"| registered | {on_ms:.4f} | {spread['on'][0]:.4f}–{spread['on'][1]:.4f} |",
             f"| removed | {off_ms:.4f} | {spread['off'][0]:.4f}–{spread['off'][1]:.4f} |", "",
             f"Cost: {cost:+.3f} % of a step (target ≤ {a.target_pct} %): **{'PASS' if ok else 'FAIL'}**. "
             f"Marks put: {marks}."]
    (out / "step_marks_cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"RESULT rounds={a.rounds} block={a.block} on_ms={on_ms:.4f} off_ms={off_ms:.4f} cost_pct={cost:.3f} "
          f"marks={marks}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
