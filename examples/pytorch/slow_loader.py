#!/usr/bin/env python3
"""slow_loader: a training loop whose GPU waits on its Python data loader.

Each batch comes from load_batch(), which sleeps --load-ms (standing in for decoding and
augmentation on the CPU) at a known line and then makes the batch; the model's GPU work per step
is far shorter (by default the loader sleeps 20 ms a step, the model's work takes about 1 ms), so
the GPU idles mostly while that line runs; the program's own clock measures how much (the time
inside load_batch over the loop's time, ``load_share``). Every 10th step reads the loss
with .item() (a synchronizing call at its own line). The sampler's answer (gpuscope trace
--python-sampling; stats -r gpu_idle_py) should name load_batch's sleep line.

Prints the line numbers to look for and
``RESULT steps=S ms_per_step=M load_share=F load_line=L item_line=I pid=P final_loss=X``. Exit 2 without CUDA.
"""
import argparse
import inspect
import os
import sys
import time

import torch


def load_batch(batch, width, load_s, device):
    time.sleep(load_s)  # the loader's CPU work: the GPU waits here
    return torch.randn(batch, width, device=device)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--load-ms", type=float, default=20.0, help="the loader's sleep per batch (default 20 ms)")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=1024)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("slow_loader: no CUDA device", file=sys.stderr)
        return 2
    model = torch.nn.Sequential(torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
                                torch.nn.Linear(args.width, args.width)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_value = float("nan")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    loading = 0.0
    for step in range(args.steps):
        t_load = time.perf_counter()
        x = load_batch(args.batch, args.width, args.load_ms / 1e3, "cuda")
        loading += time.perf_counter() - t_load
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 10 == 0:
            loss_value = loss.item()  # @item
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    ms = elapsed * 1e3 / args.steps
    source, first = inspect.getsourcelines(load_batch)
    load_line = first + next(i for i, text in enumerate(source) if "time.sleep" in text)
    item_line = next(n for n, text in enumerate(open(__file__), 1) if "# @item" in text and "loss.item()" in text)
    print(f"RESULT steps={args.steps} ms_per_step={ms:.4f} load_share={loading / elapsed:.4f} load_line={load_line} "
          f"item_line={item_line} pid={os.getpid()} final_loss={loss_value:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
