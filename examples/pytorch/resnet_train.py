#!/usr/bin/env python3
"""resnet_train: torchvision resnet18 trained for a few steps, the overhead benchmark's real workload.

Model: torchvision.models.resnet18 (random weights, 1000 classes); SGD (lr 0.01, momentum
0.9); CrossEntropyLoss. Data: ONE batch of --batch random 3x--size x--size images and
labels generated on the GPU once (seed 0) and reused every step.

Each step (zero_grad, forward, loss, backward, optimizer step) ends with loss.item(), so
its GPU work finishes inside the timed step; each is in an NVTX range "step N".
--torch-profiler runs the steps under torch.profiler (CPU + CUDA activities); --window FIRST
LAST brackets those steps with cudaProfilerStart/Stop (gpuscope trace
--capture-range=cudaProfilerApi, validation/torch_profiler_window.py).

Prints ``RESULT steps=S ms_per_step=M final_loss=L pid=P device=D max_reserved=B max_allocated=B
max_requested=B`` (torch.cuda.max_memory_reserved(), max_memory_allocated(),
memory_stats()['requested_bytes.all.peak'] at the end, bytes) where M is the median over the steps
after --warmup (default: steps 5..S-1). --print-steps adds, after that line, one line per step,
``STEP i ms=X.XXXX`` (the wall time of step i, ms, from before its NVTX push to after its pop:
validation/kernels_speed.py compares a profiled step with the others of the same process).
Exit status 1 if the loss is not finite, 2 if there is no GPU or torchvision is missing.
"""
import argparse
import contextlib
import os
import statistics
import sys
import time

import torch
from torch import nn


def make_training(torchvision, batch=32, size=112):
    """(model, optimizer, loss_fn, images, labels): resnet18 on the GPU, SGD, one fixed batch (seed 0)."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    images = torch.randn(batch, 3, size, size, device="cuda", generator=gen)
    labels = torch.randint(0, 1000, (batch,), device="cuda", generator=gen)
    return model, optimizer, nn.CrossEntropyLoss(), images, labels


def add_step_args(parser, steps, warmup):
    """The options every training example of the benchmarks shares: --steps, --warmup,
    --torch-profiler, --window (this script and vit_train.py)."""
    parser.add_argument("--steps", type=int, default=steps, help=f"training steps (default {steps})")
    parser.add_argument("--warmup", type=int, default=warmup, help=f"steps left out of ms/step (default {warmup})")
    parser.add_argument("--torch-profiler", action="store_true", help="run under torch.profiler (CPU+CUDA)")
    parser.add_argument("--window", type=int, nargs=2, metavar=("FIRST", "LAST"),
                        help="call cudaProfilerStart before step FIRST and cudaProfilerStop after step LAST "
                             "(for gpuscope trace --capture-range=cudaProfilerApi)")


def step_args_error(args, prog):
    """Prints why the shared options cannot run (no GPU, bad --steps or --window) and returns 2; None if they can."""
    if not torch.cuda.is_available():
        print(f"{prog}: no CUDA device", file=sys.stderr)
        return 2
    if args.steps <= args.warmup:
        print(f"{prog}: --steps must exceed --warmup", file=sys.stderr)
        return 2
    if args.window and not 0 <= args.window[0] <= args.window[1] < args.steps:
        print(f"{prog}: --window FIRST LAST must lie inside 0..steps-1", file=sys.stderr)
        return 2
    return None


def run_steps(args, step):
    """Runs args.steps training steps, step() returning each one's loss tensor: each in an NVTX
    range "step N", ended by loss.item() (the step's GPU work finishes inside it), under
    torch.profiler with --torch-profiler, --window bracketed by cudaProfilerStart/Stop.
    Returns (losses, seconds per step)."""
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
            losses.append(step().item())  # synchronizes: the step's GPU work ends here
            torch.cuda.nvtx.range_pop()
            seconds.append(time.perf_counter() - t0)
            if args.window and i == args.window[1]:
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
    return losses, seconds


def report_steps(args, prog, what, losses, seconds, result_extra="", after_result=None):
    """Prints the summary line and ``RESULT steps=S ms_per_step=M final_loss=L pid=P`` +
    result_extra (M: median of the steps after --warmup), calls after_result(), and returns the
    exit status: 1 when a loss is not finite, else 0."""
    ms_per_step = statistics.median(seconds[args.warmup:]) * 1e3
    mode = "torch.profiler" if args.torch_profiler else "plain"
    print(f"{prog} ({mode}): {args.steps} steps, {what}, first step {seconds[0] * 1e3:.1f} ms, "
          f"median of steps {args.warmup}..{args.steps - 1} {ms_per_step:.3f} ms")
    print(f"RESULT steps={args.steps} ms_per_step={ms_per_step:.4f} final_loss={losses[-1]:.6f} "
          f"pid={os.getpid()}{result_extra}")
    if after_result is not None:
        after_result()
    if not all(v == v and abs(v) != float("inf") for v in losses):
        print(f"{prog}: loss is not finite", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_step_args(parser, steps=40, warmup=5)
    parser.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    parser.add_argument("--size", type=int, default=112, help="image height and width (default 112)")
    parser.add_argument("--print-steps", action="store_true",
                        help="after the RESULT line, print 'STEP i ms=X.XXXX' (wall ms of step i) for every step")
    args = parser.parse_args()
    error = step_args_error(args, "resnet_train")
    if error is not None:
        return error
    try:
        import torchvision
    except ImportError:
        print("resnet_train: torchvision is not installed", file=sys.stderr)
        return 2

    model, optimizer, loss_fn, images, labels = make_training(torchvision, args.batch, args.size)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss

    losses, seconds = run_steps(args, step)
    memory = (f" device={torch.cuda.current_device()} max_reserved={torch.cuda.max_memory_reserved()} "
              f"max_allocated={torch.cuda.max_memory_allocated()} "
              f"max_requested={torch.cuda.memory_stats().get('requested_bytes.all.peak', 0)}")

    def print_steps():
        if args.print_steps:
            for i, s in enumerate(seconds):
                print(f"STEP {i} ms={s * 1e3:.4f}")
    return report_steps(args, "resnet_train", f"batch {args.batch}, {args.size}x{args.size}", losses, seconds,
                        memory, print_steps)

if __name__ == "__main__":
    sys.exit(main())
