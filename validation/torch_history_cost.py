#!/usr/bin/env python3
"""What `gpuscope trace --pytorch=memory` costs a resnet18 training step, in one process.

The history of PyTorch's caching allocator (torch.cuda.memory._record_memory_history with
context=None, as gpuscope's hooks switch it on) is switched on and off in blocks of --block
steps inside one untraced process (examples/pytorch/resnet_train.py's model and batch), so
the process-to-process drift of the GPU machine (docs/performance.md) does not enter:
cost = median(step time, history on) / median(off) - 1, with the spread of the per-pair
ratios. The events recorded per step are counted from the allocator's own snapshot.

Usage: torch_history_cost.py [--pairs 20] [--block 25] [--out OUT]   (writes OUT.json if given)
Prints ``RESULT on_ms=.. off_ms=.. cost_pct=.. events_per_step=.. ns_per_event=..``.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "pytorch"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--block", type=int, default=25)
    ap.add_argument("--out")
    args = ap.parse_args()
    import torch
    import torchvision
    from resnet_train import make_training
    model, opt, loss_fn, images, labels = make_training(torchvision)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        opt.step()
        return loss.item()

    def history(on):
        torch.cuda.memory._record_memory_history(enabled="all" if on else None, context=None, stacks="python",
                                                 max_entries=2_000_000)
    for _ in range(20):
        step()
    on_t, off_t, ratios = [], [], []
    events = []
    for _ in range(args.pairs):
        med = {}
        for on in (True, False):
            history(on)
            times = []
            for _ in range(args.block):
                t = time.perf_counter()
                step()
                times.append(time.perf_counter() - t)
            if on:
                events.append(len(torch.cuda.memory._snapshot()["device_traces"][0]) / args.block)
            (on_t if on else off_t).extend(times)
            med[on] = statistics.median(times)
        ratios.append(med[True] / med[False])
    history(False)
    on_ms, off_ms = statistics.median(on_t) * 1e3, statistics.median(off_t) * 1e3
    cost = (on_ms / off_ms - 1) * 100
    per_step = statistics.median(events)
    ns_per_event = (on_ms - off_ms) * 1e6 / per_step if per_step else float("nan")
    q = statistics.quantiles(ratios, n=4)
    result = {"on_ms": on_ms, "off_ms": off_ms, "cost_pct": cost, "pair_ratio_q1": q[0], "pair_ratio_median": q[1],
              "pair_ratio_q3": q[2], "events_per_step": per_step, "ns_per_event": ns_per_event,
              "pairs": args.pairs, "block": args.block, "gpu": torch.cuda.get_device_name(),
              "torch": torch.__version__}
    if args.out:
        Path(args.out + ".json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"RESULT on_ms={on_ms:.4f} off_ms={off_ms:.4f} cost_pct={cost:.2f} pair_ratio_q1={q[0]:.4f} "
          f"pair_ratio_q3={q[2]:.4f} events_per_step={per_step:.0f} ns_per_event={ns_per_event:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
