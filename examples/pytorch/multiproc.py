#!/usr/bin/env python3
"""multiproc: two worker processes (multiprocessing, 'spawn') that each launch kernels.

The parent never touches CUDA. Worker i creates x = torch.zeros(64, device='cuda')
(one fill kernel) and runs OPS[i] in-place adds (one kernel each), so it launches at
least 1 + OPS[i] kernels. Each worker checks its result and prints
``RESULT worker=i pid=PID ops=OPS[i] min_kernels=1+OPS[i] ok=1``.
Exit status 1 if a worker failed or computed a wrong value.
"""
import multiprocessing as mp
import os
import sys

OPS = (30, 50)


def worker(index, ops):
    """Launches 1 + ops kernels on the GPU, prints its RESULT line, exits 0 if right."""
    import torch

    x = torch.zeros(64, device="cuda")
    for _ in range(ops):
        x.add_(1)
    ok = bool(torch.all(x == float(ops)).item())
    print(f"RESULT worker={index} pid={os.getpid()} ops={ops} min_kernels={ops + 1} ok={int(ok)}",
          flush=True)
    sys.exit(0 if ok else 1)


def main():
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(i, ops)) for i, ops in enumerate(OPS)]
    for p in procs:  # run one after the other: easier to read in a timeline
        p.start()
        p.join()
    codes = [p.exitcode for p in procs]
    print(f"multiproc: parent pid={os.getpid()} worker exit codes {codes}")
    return 0 if all(c == 0 for c in codes) else 1


if __name__ == "__main__":
    sys.exit(main())
