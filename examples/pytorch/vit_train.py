#!/usr/bin/env python3
"""vit_train: a transformer training step, timm's ViT-S/16 in bf16 (SDPA attention, AdamW), the
operator-heavy workload of the overhead benchmark (about 6,800 operator calls and 750 kernels
per step).

Model: timm.create_model("vit_small_patch16_224", num_classes=1000), random weights, on the GPU;
forward and loss under torch.autocast(bfloat16) (timm's attention calls
F.scaled_dot_product_attention); AdamW (lr 1e-4, foreach); CrossEntropyLoss. Data: ONE batch of
--batch random 3x224x224 images and labels generated on the GPU once (seed 0), reused every step.

Each step (zero_grad, forward, loss, backward, optimizer step) ends with loss.item(), so its GPU
work finishes inside the timed step; each is in an NVTX range "step N". --torch-profiler runs the
steps under torch.profiler (CPU + CUDA activities); --window FIRST LAST brackets those steps with
cudaProfilerStart/Stop (validation/torch_profiler_window.py, pytorch_check.py).

Prints ``RESULT steps=S ms_per_step=M final_loss=L pid=P`` where M is the median over the steps
after --warmup (default: steps 3..S-1). Exit status 1 if the loss is not finite, 2 if there is no
GPU or timm is missing.
"""
import argparse
import contextlib
import os
import statistics
import sys
import time

import torch
from torch import nn


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="steps left out of ms/step (default 3)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--torch-profiler", action="store_true", help="run under torch.profiler (CPU+CUDA)")
    parser.add_argument("--window", type=int, nargs=2, metavar=("FIRST", "LAST"),
                        help="call cudaProfilerStart before step FIRST and cudaProfilerStop after step LAST")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("vit_train: no CUDA device", file=sys.stderr)
        return 2
    if args.steps <= args.warmup:
        print("vit_train: --steps must exceed --warmup", file=sys.stderr)
        return 2
    if args.window and not 0 <= args.window[0] <= args.window[1] < args.steps:
        print("vit_train: --window FIRST LAST must lie inside 0..steps-1", file=sys.stderr)
        return 2
    try:
        import timm
    except ImportError:
        print("vit_train: timm is not installed", file=sys.stderr)
        return 2

    torch.manual_seed(0)
    model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=1000).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda", generator=gen)
    labels = torch.randint(0, 1000, (args.batch,), device="cuda", generator=gen)

    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        context = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    else:
        context = contextlib.nullcontext()
    losses, seconds = [], []
    with context:
        for i in range(args.steps):
            if args.window and i == args.window[0]:
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
            t0 = time.perf_counter()
            torch.cuda.nvtx.range_push(f"step {i}")
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = loss_fn(model(images), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())  # synchronizes: the step's GPU work ends here
            torch.cuda.nvtx.range_pop()
            seconds.append(time.perf_counter() - t0)
            if args.window and i == args.window[1]:
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()

    ms_per_step = statistics.median(seconds[args.warmup:]) * 1e3
    mode = "torch.profiler" if args.torch_profiler else "plain"
    print(f"vit_train ({mode}): {args.steps} steps, batch {args.batch}, first step {seconds[0] * 1e3:.1f} ms, "
          f"median of steps {args.warmup}..{args.steps - 1} {ms_per_step:.3f} ms")
    print(f"RESULT steps={args.steps} ms_per_step={ms_per_step:.4f} final_loss={losses[-1]:.6f} pid={os.getpid()}")
    if not all(v == v and abs(v) != float("inf") for v in losses):
        print("vit_train: loss is not finite", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
