#!/usr/bin/env python3
"""memory_peak: a few training steps of a small MLP whose memory peak is known, for
`gpuscope trace --cuda-memory-usage` (tests/gpu/test_cuda_memory.py).

Model: Linear(1024,4096) ReLU Linear(4096,4096) ReLU Linear(4096,1024), Adam(lr 1e-3), MSE
loss, one batch of BATCH random inputs and targets made on the GPU before training (seed 0):
about 96 MiB of weights, as much of gradients and twice that of Adam state. Each step is in
an NVTX range "step N" (N from 0) and ends with loss.item(). Step --spike-step (default 2)
also allocates a temporary tensor of --spike-mib MiB (default 256) inside its range and frees
it, so that step holds the most memory.

PyTorch's caching allocator keeps every block it took with cudaMalloc (this script never calls
empty_cache), so at the end the segments it holds are every segment it ever took, and their
total is torch.cuda.max_memory_reserved().

Prints per step ``STEP i loss=L reserved=R allocated=A``, then one line per segment of the
caching allocator, ``SEGMENT device=D address=0x... size=S``, and last
``RESULT steps=S pid=P device=D max_reserved=B reserved=B max_allocated=B segments=N
segment_bytes=B`` (bytes).
"""
import argparse
import os
import sys

import torch
from torch import nn

BATCH = 512


def build_model():
    return nn.Sequential(
        nn.Linear(1024, 4096), nn.ReLU(),
        nn.Linear(4096, 4096), nn.ReLU(),
        nn.Linear(4096, 1024),
    ).cuda()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="training steps (default 5)")
    parser.add_argument("--spike-step", type=int, default=2, help="step that also allocates the spike (default 2)")
    parser.add_argument("--spike-mib", type=int, default=256, help="size of the spike tensor in MiB (default 256)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("memory_peak: CUDA is not available", file=sys.stderr)
        return 2

    torch.manual_seed(0)
    device = torch.cuda.current_device()
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    inputs = torch.randn(BATCH, 1024, device="cuda", generator=gen)
    targets = torch.randn(BATCH, 1024, device="cuda", generator=gen)

    for i in range(args.steps):
        torch.cuda.nvtx.range_push(f"step {i}")
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        if i == args.spike_step:  # before optimizer.step(), which ends the step gpuscope's step marks name i
            spike = torch.empty(args.spike_mib * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
            spike.fill_(1.0)
            del spike  # back to the allocator's cache: still reserved
        optimizer.step()
        value = loss.item()
        torch.cuda.nvtx.range_pop()
        print(f"STEP {i} loss={value:.6f} reserved={torch.cuda.memory_reserved()} "
              f"allocated={torch.cuda.memory_allocated()}", flush=True)

    torch.cuda.synchronize()
    segments = [s for s in torch.cuda.memory_snapshot() if s.get("device", device) == device]
    for s in segments:
        print(f"SEGMENT device={s.get('device', device)} address={s['address']:#x} size={s['total_size']}")
    print(f"RESULT steps={args.steps} pid={os.getpid()} device={device} "
          f"max_reserved={torch.cuda.max_memory_reserved()} reserved={torch.cuda.memory_reserved()} "
          f"max_allocated={torch.cuda.max_memory_allocated()} segments={len(segments)} "
          f"segment_bytes={sum(s['total_size'] for s in segments)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
