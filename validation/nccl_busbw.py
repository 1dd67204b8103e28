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
import ctypes
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
    p.add_argument("--each", action="store_true",
                   help="also time each call between its own pair of CUDA events (each_time_us): not in the "
                        "traced run, whose back-to-back calls must be the loop's alone")
    p.add_argument("--direct", action="store_true",
                   help="also time ncclAllReduce called directly (ctypes, current stream, as nccl-tests): "
                        "direct_loop_time_us, direct_each_time_us")
    p.add_argument("--out", default=None, help="JSON file rank 0 writes")
    return p.parse_args()


def queue_behind_sleep(sleep_cycles, queue_ms):
    """Every rank idle and lined up (synchronize, barrier, synchronize), then a GPU sleep of
    queue_ms (if > 0) that the calls timed next are queued behind, so that the GPU sets their pace."""
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    if queue_ms > 0:
        torch.cuda._sleep(sleep_cycles)


def loop_time_us(call, iters, sleep_cycles, queue_ms):
    """(GPU time per call, CPU time per call) of `iters` calls back to back between two CUDA events
    on the current stream, queued behind a GPU sleep: nccl-tests' loop."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    queue_behind_sleep(sleep_cycles, queue_ms)
    start.record()
    cpu0 = time.perf_counter()
    for _ in range(iters):
        call()
    cpu_s = time.perf_counter() - cpu0
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / iters, cpu_s * 1e6 / iters


def each_call_us(call, iters, sleep_cycles, queue_ms, world):
    """Time of one collective: a pair of CUDA events around each of `iters` calls (queued behind a
    GPU sleep), the pair's elapsed time on the rank that waited least (the last to arrive: the
    collective once every rank is in, as nccl_sum times an instance), averaged over the calls after
    the first (the first absorbs the ranks' start skew). Excludes the gap between one call's end and
    the next call's start, which the loop includes."""
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    queue_behind_sleep(sleep_cycles, queue_ms)
    for a, b in pairs:
        a.record()
        call()
        b.record()
    pairs[-1][1].synchronize()
    times = torch.tensor([a.elapsed_time(b) * 1e3 for a, b in pairs], dtype=torch.float64, device="cuda")
    dist.all_reduce(times, op=dist.ReduceOp.MIN)
    return float(times[1:].mean()) if iters > 1 else float(times[0])


class DirectNccl:
    """NCCL called as nccl-tests calls it: ncclAllReduce through ctypes, straight onto the current
    stream, with no PyTorch (no side stream, no events) in between. The library is the libnccl
    this process already loaded for torch.distributed (read from /proc/self/maps)."""

    class UniqueId(ctypes.Structure):
        _fields_ = [("internal", ctypes.c_ubyte * 128)]  # NCCL_UNIQUE_ID_BYTES

    def __init__(self, rank, world):
        path = next((line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
                     if "libnccl" in line.rsplit("/", 1)[-1]), None)
        if path is None:
            raise RuntimeError("no libnccl loaded in this process")
        self.lib = ctypes.CDLL(path)
        uid = DirectNccl.UniqueId()
        if rank == 0:
            self.check(self.lib.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        box = [bytes(bytearray(uid.internal)) if rank == 0 else None]
        dist.broadcast_object_list(box, src=0)
        ctypes.memmove(uid.internal, box[0], 128)
        self.comm = ctypes.c_void_p()
        self.check(self.lib.ncclCommInitRank(ctypes.byref(self.comm), ctypes.c_int(world), uid, ctypes.c_int(rank)),
                   "ncclCommInitRank")
        self.lib.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                           ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        self.path = path

    @staticmethod
    def check(code, what):
        if code != 0:
            raise RuntimeError(f"{what} returned ncclResult {code}")

    def all_reduce(self, t):
        assert t.dtype == torch.float32
        ptr = ctypes.c_void_p(t.data_ptr())
        self.check(self.lib.ncclAllReduce(ptr, ptr, t.numel(), 7, 0, self.comm,  # ncclFloat32, ncclSum
                                          ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)), "ncclAllReduce")


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
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        queue_behind_sleep(sleep_cycles, queue_ms)
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
    direct = None
    if args.direct:
        try:
            direct = DirectNccl(rank, world)
        except (OSError, RuntimeError, AttributeError) as e:  # report, keep the torch figures
            print(f"nccl_busbw: direct NCCL unavailable: {e}", file=sys.stderr)

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
        loop_us, cpu_us = loop_time_us(lambda: dist.all_reduce(t), iters, sleep_cycles, args.queue_ms)
        graph_us = float("nan")
        if args.graph:
            graph_us = graph_time_us(t, iters, sleep_cycles, args.queue_ms)
        each = float("nan")
        if args.each:
            each = each_call_us(lambda: dist.all_reduce(t), iters, sleep_cycles, args.queue_ms, world)
        direct_loop = direct_each = float("nan")
        if direct is not None:
            call = lambda: direct.all_reduce(t)  # noqa: E731
            for _ in range(args.warmup):
                call()
            torch.cuda.synchronize()
            dist.barrier()
            direct_loop, _ = loop_time_us(call, iters, sleep_cycles, args.queue_ms)
            if args.each:
                direct_each = each_call_us(call, iters, sleep_cycles, args.queue_ms, world)
        mine = torch.tensor([loop_us, cpu_us, graph_us, direct_loop], dtype=torch.float64, device=device)
        dist.all_reduce(mine)
        time_us, cpu_us, graph_us, direct_loop = (v / world for v in mine.tolist())
        queued = int(args.queue_ms > 0 and cpu_us * iters < args.queue_ms * 1e3)
        algbw = size / (time_us * 1e-6) / 1e9
        row = {"bytes": size, "iters": iters, "time_us": time_us, "algbw_gbs": algbw,
               "busbw_gbs": algbw * factor, "cpu_us": cpu_us, "queued": queued}
        graph = ""
        if graph_us == graph_us:  # not NaN
            row["graph_time_us"] = graph_us
            row["graph_busbw_gbs"] = size / (graph_us * 1e-6) / 1e9 * factor
            graph = f" graph_time_us={graph_us:.2f} graph_busbw_gbs={row['graph_busbw_gbs']:.2f}"
        for key, us in (("each", each), ("direct_loop", direct_loop), ("direct_each", direct_each)):
            if us == us:
                row[f"{key}_time_us"] = us
                row[f"{key}_busbw_gbs"] = size / (us * 1e-6) / 1e9 * factor
                graph += f" {key}_time_us={us:.2f} {key}_busbw_gbs={row[f'{key}_busbw_gbs']:.2f}"
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
    if direct is not None:
        direct.lib.ncclCommDestroy(direct.comm)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
