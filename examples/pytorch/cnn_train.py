#!/usr/bin/env python3
"""cnn_train: a small CNN trained for a few steps, for tracing and overhead tests.

Model: Conv2d(3,64,3,p1) ReLU MaxPool2d(2) Conv2d(64,128,3,p1) ReLU MaxPool2d(2)
AdaptiveAvgPool2d(1) Flatten Linear(128,10); Adam(lr 1e-3); CrossEntropyLoss.
Data: ONE batch of 32 random 3x32x32 images and labels, generated on the GPU once
before training (seed 0) and reused every step, so the loss falls step by step.

Each step is in an NVTX range "step N" (N from 0) and ends with loss.item(), so all its
GPU work finishes inside the range. torch.cuda.profiler.start() (cudaProfilerStart) is
called before step 5 and torch.cuda.profiler.stop() after step 10 (--window FIRST LAST), each
after a torch.cuda.synchronize(); --no-profiler-range leaves both out (overhead benchmark).
--torch-profiler runs the steps under torch.profiler (CPU + CUDA activities).

Prints loss and ms per step, then
``RESULT steps=S final_loss=L ms_per_step=M`` where M is the median over the steps
after --warmup. --deterministic selects deterministic cuDNN/cuBLAS algorithms and prints
the final loss with full precision (repr), so traced and untraced runs compare exactly.
"""
import os

# cuBLAS needs this before it initialises for deterministic results; set before torch.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import torch  # noqa: E402
from torch import nn  # noqa: E402

PROFILER_START_STEP = 5  # cudaProfilerStart before this step
PROFILER_STOP_STEP = 10  # cudaProfilerStop after this step (inclusive)
BATCH = 32


def configure(deterministic):
    """Seeds torch and, if asked, selects deterministic algorithms."""
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    if deterministic:
        torch.backends.cudnn.deterministic = True
        # warn_only: some backward kernels (e.g. adaptive_avg_pool2d) have no
        # deterministic flag and would otherwise raise; warn about them instead.
        warnings.filterwarnings("ignore", message=".*does not have a deterministic implementation.*")
        torch.use_deterministic_algorithms(True, warn_only=True)


def build_model():
    """The examples' CNN on the GPU."""
    return nn.Sequential(
        nn.Conv2d(3, 64, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 128, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
    ).cuda()


def make_batch():
    """One fixed batch (images, labels) generated on the GPU with seed 0."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    images = torch.randn(BATCH, 3, 32, 32, device="cuda", generator=gen)
    labels = torch.randint(0, 10, (BATCH,), device="cuda", generator=gen)
    return images, labels


class Trainer:
    """Model, optimizer, loss and data: call step(i) once per training step."""

    def __init__(self):
        self.model = build_model()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.loss_fn = nn.CrossEntropyLoss()
        self.images, self.labels = make_batch()

    def step(self, i):
        """One training step in NVTX range "step i"; returns the loss as a float."""
        torch.cuda.nvtx.range_push(f"step {i}")
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.model(self.images), self.labels)
        loss.backward()
        self.optimizer.step()
        value = loss.item()  # synchronizes: the step's GPU work ends inside the range
        torch.cuda.nvtx.range_pop()
        return value


def train(steps, profiler_range, on_step=None, window=(PROFILER_START_STEP, PROFILER_STOP_STEP)):
    """Runs the steps; returns (losses, seconds per step). on_step(i, phase) hooks 'before'/'after';
    with profiler_range, cudaProfilerStart/Stop open and close the steps window[0]..window[1]."""
    trainer = Trainer()
    losses, seconds = [], []
    for i in range(steps):
        if profiler_range and i == window[0]:
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
        if on_step:
            on_step(i, "before")
        t0 = time.perf_counter()
        losses.append(trainer.step(i))
        seconds.append(time.perf_counter() - t0)
        if on_step:
            on_step(i, "after")
        if profiler_range and i == window[1]:
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
    return losses, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=15, help="training steps (default 15)")
    parser.add_argument("--warmup", type=int, default=3, help="steps left out of ms/step (default 3)")
    parser.add_argument("--deterministic", action="store_true", help="deterministic algorithms, full-precision loss")
    parser.add_argument("--no-profiler-range", action="store_true", help="do not call cudaProfilerStart/Stop")
    parser.add_argument("--torch-profiler", action="store_true", help="run under torch.profiler (CPU+CUDA)")
    parser.add_argument("--window", type=int, nargs=2, metavar=("FIRST", "LAST"),
                        default=(PROFILER_START_STEP, PROFILER_STOP_STEP),
                        help=f"steps inside cudaProfilerStart/Stop (default {PROFILER_START_STEP} {PROFILER_STOP_STEP})")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("cnn_train: no CUDA device", file=sys.stderr)
        return 2
    if args.steps <= args.warmup:
        print("cnn_train: --steps must exceed --warmup", file=sys.stderr)
        return 2
    if not args.no_profiler_range and not 0 <= args.window[0] <= args.window[1]:
        print("cnn_train: --window needs 0 <= FIRST <= LAST", file=sys.stderr)
        return 2
    configure(args.deterministic)
    profiler_range = not args.no_profiler_range

    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            losses, seconds = train(args.steps, profiler_range, window=tuple(args.window))
    else:
        losses, seconds = train(args.steps, profiler_range, window=tuple(args.window))

    for i, (loss, sec) in enumerate(zip(losses, seconds)):
        print(f"step {i:3d}  loss {loss:.6f}  {sec * 1e3:8.3f} ms")
    ms_per_step = statistics.median(seconds[args.warmup:]) * 1e3
    final = repr(losses[-1]) if args.deterministic else f"{losses[-1]:.6f}"
    print(f"RESULT steps={args.steps} final_loss={final} ms_per_step={ms_per_step:.4f}")
    if not all(map(lambda v: v == v and abs(v) != float("inf"), losses)):
        print("cnn_train: loss is not finite", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
