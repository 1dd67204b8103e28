#!/usr/bin/env python3
"""nccl_busbw: all-reduce bus bandwidth timed as nccl-tests times it, with CUDA events.

Run under torchrun, one GPU per rank:
    python3 -m torch.distributed.run --standalone --nproc_per_node 2 validation/nccl_busbw.py --out busbw.json

For each size (float32 tensors, default 1, 4, 16, 64 and 256 MiB): --warmup all_reduce calls,
a barrier, then N calls back to back between two CUDA events on the current stream (N =
--bytes-per-size / size, clamped to [--min-iters, --max-iters]); time = elapsed / N, averaged
over the ranks. The N calls are queued behind a GPU sleep (torch.cuda._sleep, --queue-ms) that
starts before the first event, so that the GPU sets the pace, not PyTorch's CPU cost per call
(10-20 us, as long as a 1 MiB all-reduce): nccl-tests' C loop launches faster than its
collectives run. Each RESULT line gives the CPU time per call (cpu_us) and queued=0 when the
CPU took longer than the sleep to queue them (then the time is the CPU's).
As nccl-tests (doc/PERFORMANCE.md) defines them:
    algbw = S / time              S: the tensor's bytes
    busbw = algbw x 2 (n - 1) / n  n: ranks
Rank 0 prints ``RESULT size=B iters=N time_us=T algbw_gbs=A busbw_gbs=B cpu_us=C queued=Q``
per size (GB/s = 1e9 bytes/s) and writes --out as JSON: {"world_size", "sizes": [{"bytes",
"iters", "time_us", "algbw_gbs", "busbw_gbs", "cpu_us", "queued"}], "torch_version",
"nccl_version"}.

Under `gpuscope trace --pytorch=ops,shapes` the same calls give nccl_sum one AllReduce row per
size: validation/multigpu_check.py compares the two. Before the sizes, one all_reduce of 4
floats sets NCCL up (its kernel lands in a size range of its own), and each rank's time is
averaged with an all_reduce of one float64.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

MIB = 1 << 20


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes-mib", type=int, nargs="+", default=[1, 4, 16, 64, 256],
                   help="tensor sizes in MiB (default 1 4 16 64 256)")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls per size (default 5)")
    p.add_argument("--bytes-per-size", type=int, default=1 << 30,
                   help="bytes all-reduced per size in the timed loop (default 1 GiB)")
    p.add_argument("--min-iters", type=int, default=20, help="fewest timed calls per size (default 20)")
    p.add_argument("--max-iters", type=int, default=100,
                   help="most timed calls per size (default 100: they must fit CUDA's launch queue)")
    p.add_argument("--queue-ms", type=float, default=40.0,
                   help="GPU sleep the timed calls are queued behind, ms (default 40; 0: none)")
    p.add_argument("--graph", action="store_true",
                   help="also time the same N calls captured in one CUDA graph (as nccl-tests -G): no launch gap "
                        "between the kernels; graph_time_us, graph_busbw_gbs")
    p.add_argument("--out", default=None, help="JSON file rank 0 writes")
    return p.parse_args()


def graph_time_us(t, iters, sleep_cycles, queue_ms):
    """Time per call of `iters` all_reduce(t) captured in one CUDA graph and replayed between two
    events (nccl-tests -G): the kernels follow each other with no launch gap. NaN when capture
    fails (an older NCCL or torch)."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up outside capture, on a side stream, as torch asks
            for _ in range(3):
                dist.all_reduce(t)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(iters):
                dist.all_reduce(t)
        graph.replay()  # the first replay uploads the graph
        torch.cuda.synchronize()
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if queue_ms > 0:
            torch.cuda._sleep(sleep_cycles)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3 / iters
    except Exception as e:  # report, keep the stream figures
        print(f"nccl_busbw: CUDA graph timing failed: {e!r}", file=sys.stderr)
        return float("nan")


def main():
    args = parse_args()
    if "RANK" not in os.environ or "LOCAL_RANK" not in os.environ:
        print("nccl_busbw: start me with torchrun (python3 -m torch.distributed.run --nproc_per_node N ...)",
              file=sys.stderr)
        return 2
    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    if not torch.cuda.is_available() or local_rank >= torch.cuda.device_count():
        print(f"nccl_busbw: rank {rank} needs GPU {local_rank}; this machine has "
              f"{torch.cuda.device_count() if torch.cuda.is_available() else 0}", file=sys.stderr)
        return 3
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    world = dist.get_world_size()
    factor = 2.0 * (world - 1) / world

    # torch.cuda._sleep spins for a number of GPU clock cycles: measure the cycles per ms.
    sleep_cycles = 0
    if args.queue_ms > 0:
        probe = 10_000_000
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(probe)  # first call: loads the kernel
        a.record()
        torch.cuda._sleep(probe)
        b.record()
        b.synchronize()
        sleep_cycles = int(probe / a.elapsed_time(b) * args.queue_ms)

    setup = torch.ones(4, device=device)
    dist.all_reduce(setup)
    torch.cuda.synchronize()

    rows = []
    for mib in args.sizes_mib:
        size = mib * MIB
        t = torch.zeros(size // 4, dtype=torch.float32, device=device)
        iters = max(args.min_iters, min(args.max_iters, args.bytes_per_size // size))
        for _ in range(args.warmup):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if args.queue_ms > 0:
            torch.cuda._sleep(sleep_cycles)
        start.record()
        cpu0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        cpu_s = time.perf_counter() - cpu0
        end.record()
        end.synchronize()
        graph_us = float("nan")
        if args.graph:
            graph_us = graph_time_us(t, iters, sleep_cycles, args.queue_ms)
        mine = torch.tensor([start.elapsed_time(end) * 1e3 / iters, cpu_s * 1e6 / iters, graph_us],
                            dtype=torch.float64, device=device)
        dist.all_reduce(mine)
        time_us, cpu_us, graph_us = (v / world for v in mine.tolist())
        queued = int(args.queue_ms > 0 and cpu_us * iters < args.queue_ms * 1e3)
        algbw = size / (time_us * 1e-6) / 1e9
        row = {"bytes": size, "iters": iters, "time_us": time_us, "algbw_gbs": algbw,
               "busbw_gbs": algbw * factor, "cpu_us": cpu_us, "queued": queued}
        graph = ""
        if graph_us == graph_us:  # not NaN
            row["graph_time_us"] = graph_us
            row["graph_busbw_gbs"] = size / (graph_us * 1e-6) / 1e9 * factor
            graph = f" graph_time_us={graph_us:.2f} graph_busbw_gbs={row['graph_busbw_gbs']:.2f}"
        rows.append(row)
        if rank == 0:
            print(f"RESULT size={size} iters={iters} time_us={time_us:.2f} algbw_gbs={algbw:.2f} "
                  f"busbw_gbs={algbw * factor:.2f} cpu_us={cpu_us:.2f} queued={queued}{graph}", flush=True)
        del t
    if rank == 0 and args.out:
        try:
            import torch.cuda.nccl as nccl_module
            version = nccl_module.version()
            nccl = ".".join(str(v) for v in version) if isinstance(version, tuple) else str(version)
        except (ImportError, RuntimeError, AttributeError):
            nccl = ""
        Path(args.out).write_text(json.dumps({"world_size": world, "sizes": rows, "torch_version": torch.__version__,
                                              "nccl_version": nccl}, indent=1))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
