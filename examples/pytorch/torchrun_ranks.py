#!/usr/bin/env python3
"""torchrun_ranks: a data-parallel training run for torchrun, every rank on one GPU.

Start it with ``python3 -m torch.distributed.run --standalone --nproc_per_node 2
torchrun_ranks.py``. Each rank (RANK, WORLD_SIZE from torchrun) joins a gloo process group,
trains its own copy of a small MLP (Linear 256-512, ReLU, Linear 512-10; SGD lr 0.1) on a
fixed batch of its own for --steps steps on cuda:(LOCAL_RANK mod the GPU count), and
averages the gradients over the ranks before each optimizer step (all_reduce on the CPU),
so the ranks stay equal; the loss falls. Each rank prints
``RESULT rank=R pid=PID steps=S loss=L ok=1`` (ok=0 if the loss did not fall or the ranks'
final losses differ). Exit status 1 if not ok.
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
from torch import nn


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8, help="training steps per rank (default 8)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torchrun_ranks: no CUDA device", file=sys.stderr)
        return 2
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count())
    torch.manual_seed(0)  # the same initial model on every rank
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator(device=device)
    gen.manual_seed(0)  # the same batch on every rank: averaged gradients equal each rank's
    x = torch.randn(64, 256, device=device, generator=gen)
    y = torch.randint(0, 10, (64,), device=device, generator=gen)
    losses = []
    for _ in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        for p in model.parameters():  # gloo reduces CPU tensors
            g = p.grad.cpu()
            dist.all_reduce(g)
            p.grad.copy_(g / dist.get_world_size())
        optimizer.step()
        losses.append(loss.item())
    final = torch.tensor([losses[-1]])
    every = [torch.zeros(1) for _ in range(dist.get_world_size())]
    dist.all_gather(every, final)
    ok = losses[-1] < losses[0] and all(abs(float(v) - losses[-1]) < 1e-5 for v in every)
    # One write of the whole line: the ranks share stdout, and print() under PYTHONUNBUFFERED
    # writes the text and its newline separately (another rank's line could land between).
    sys.stdout.write(f"RESULT rank={rank} pid={os.getpid()} steps={args.steps} loss={losses[-1]:.6f} ok={int(ok)}\n")
    sys.stdout.flush()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
