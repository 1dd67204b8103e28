#!/usr/bin/env python3
"""ddp_train: data-parallel training with DistributedDataParallel over NCCL, one GPU per rank.

Start it with ``python3 -m torch.distributed.run --standalone --nproc_per_node N
ddp_train.py [options]`` (torchrun). Each rank (RANK, LOCAL_RANK, WORLD_SIZE from torchrun)
uses cuda:LOCAL_RANK, joins an NCCL process group and trains an MLP of --layers
Linear(--width, --width) + ReLU layers and a Linear(--width, 16) head (4 x 4096^2: 67M
parameters, 268 MB of float32 gradients, so DDP all-reduces them in about 11 buckets of
25 MB while backward still computes) on a fixed random batch of --batch rows made on the GPU
(seeded by rank: every rank sees other data, the gradients are averaged). SGD, lr 1e-3.

Every step is an NVTX range "step N" (N from 0): zero_grad, forward, backward (DDP's
all-reduces), optimizer.step() (one per step, so gpuscope's torch_steps number the steps
the same way), loss.item() (the step ends with the GPU idle).

--slow-rank R --slow-from S --delay-ms D: rank R sleeps D ms on the CPU before its backward
in every step from S on, so it arrives late at the step's all-reduces and the other ranks
wait for it inside them (a straggler on purpose).

--torch-profiler OUT: steps --profile-from .. --profile-to - 1 run under torch.profiler
(CUDA activity only; started and stopped between steps, the GPU idle), and each rank writes
OUT.rankR.json: {"rank", "pid", "device", "steps": [from, to], "kernels": {name: count},
"torch_version"} (kernel names as torch.profiler's Chrome trace spells them). Do not run it
under gpuscope trace: CUDA 13 allows one CUPTI client per process.

Each rank prints ``RESULT rank=R pid=P device=D world=W steps=S ms_per_step=M`` (M: the
median wall time of the steps after the first 3). Exit status 3 (with a message) when
there are fewer GPUs than ranks; 2 without CUDA or outside torchrun.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    p.add_argument("--batch", type=int, default=256, help="rows per rank and step (default 256)")
    p.add_argument("--width", type=int, default=4096, help="hidden width (default 4096)")
    p.add_argument("--layers", type=int, default=4, help="hidden Linear layers (default 4)")
    p.add_argument("--slow-rank", type=int, default=None, help="the rank made slow on purpose")
    p.add_argument("--slow-from", type=int, default=5, help="first step of the delay (default 5)")
    p.add_argument("--delay-ms", type=float, default=20.0, help="CPU sleep before backward, ms (default 20)")
    p.add_argument("--torch-profiler", default=None, metavar="OUT",
                   help="run --profile-from..--profile-to-1 under torch.profiler; write OUT.rankR.json")
    p.add_argument("--profile-from", type=int, default=10, help="first profiled step (default 10)")
    p.add_argument("--profile-to", type=int, default=15, help="step after the last profiled one (default 15)")
    args = p.parse_args()
    if args.torch_profiler and not 0 <= args.profile_from < args.profile_to <= args.steps:
        p.error(f"need 0 <= --profile-from < --profile-to <= --steps (got {args.profile_from}, "
                f"{args.profile_to}, {args.steps})")
    return args


def kernel_counts(prof):
    """{kernel name: count} from the profiler's Chrome trace (events of category 'kernel')."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text()).get("traceEvents", [])
    counts = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            counts[e["name"]] = counts.get(e["name"], 0) + 1
    return counts


def main():
    args = parse_args()
    if "RANK" not in os.environ or "LOCAL_RANK" not in os.environ:
        print("ddp_train: start me with torchrun (python3 -m torch.distributed.run --nproc_per_node N ...)",
              file=sys.stderr)
        return 2
    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if not torch.cuda.is_available():
        print(f"ddp_train: rank {rank}: no CUDA device", file=sys.stderr)
        return 2
    gpus = torch.cuda.device_count()
    if local_rank >= gpus:
        print(f"ddp_train: rank {rank} (local rank {local_rank}) needs GPU {local_rank}, but this machine has "
              f"{gpus} GPU(s): run at most {gpus} ranks per node (--nproc_per_node)", file=sys.stderr)
        return 3
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)

    torch.manual_seed(0)  # the same initial model on every rank (DDP broadcasts rank 0's anyway)
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.width, args.width), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(args.width, 16)).to(device)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    gen = torch.Generator(device=device)
    gen.manual_seed(1000 + rank)
    x = torch.randn(args.batch, args.width, device=device, generator=gen)
    y = torch.randint(0, 16, (args.batch,), device=device, generator=gen)

    prof = None
    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CUDA])
    walls = []
    for step in range(args.steps):
        if prof is not None and step == args.profile_from:
            torch.cuda.synchronize()
            prof.start()
        t0 = time.perf_counter()
        torch.cuda.nvtx.range_push(f"step {step}")
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(ddp(x), y)
        if args.slow_rank == rank and step >= args.slow_from:
            time.sleep(args.delay_ms / 1e3)
        loss.backward()
        optimizer.step()
        loss.item()
        torch.cuda.nvtx.range_pop()
        walls.append(time.perf_counter() - t0)
        if prof is not None and step == args.profile_to - 1:
            torch.cuda.synchronize()
            prof.stop()

    if prof is not None:
        out = Path(f"{args.torch_profiler}.rank{rank}.json")
        out.write_text(json.dumps({"rank": rank, "pid": os.getpid(), "device": local_rank,
                                   "steps": [args.profile_from, args.profile_to], "kernels": kernel_counts(prof),
                                   "torch_version": torch.__version__}, indent=1, sort_keys=True))
    steady = walls[3:] or walls
    # One write of the whole line: the ranks share stdout, and print() writes the text and the
    # newline apart, so two ranks' lines could run together.
    sys.stdout.write(f"RESULT rank={rank} pid={os.getpid()} device={local_rank} world={world} steps={args.steps} "
                     f"ms_per_step={statistics.median(steady) * 1e3:.3f}\n")
    sys.stdout.flush()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
