#!/usr/bin/env python3
"""What the Python sampler costs a CPU-bound Python program, measured inside one process.

Loads the frame-walker probe (build/lib/libpython_stack_probe.so: the collector's sampler
without CUDA) and times blocks of a pure-Python workload whose stack is --depth frames deep,
with the sampler off and on (--rate Hz) alternating, the order swapped every round; each "on"
block starts a sampler and stops it after. --threads idle Python threads (sleeping in a
function, as a PyTorch program's helper threads do) are sampled too. Prints the median block
time of each mode, the time added, and the sampler's own CPU time per second of wall time
(process CPU time minus the main thread's, during the blocks). Samples are verified: each
"on" block's log must hold samples of the main thread whose innermost frame is the workload's.

Usage: python_sampling_cpu_cost.py [--probe PATH] [--rate 1000] [--rounds 9] [--depth 30]
       [--threads 4] [--block-s 0.5]
"""
import argparse
import ctypes
import os
import statistics
import struct
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def workload(depth, until):
    """Recurses to depth, then loops on arithmetic until `until` (perf_counter); returns iterations."""
    if depth > 0:
        return workload(depth - 1, until)
    n = 0
    while time.perf_counter() < until:
        for _ in range(2000):
            n += 1
    return n


def work_block(depth, seconds):
    """Runs the workload for `seconds`; returns iterations per second (the block's speed)."""
    t0 = time.perf_counter()
    n = workload(depth, t0 + seconds)
    return n / (time.perf_counter() - t0)


def samples_in(path):
    data = open(path, "rb").read()
    offset = struct.unpack_from("<I", data, 12)[0]
    out = []
    while offset + 8 <= len(data):
        kind, _, size = struct.unpack_from("<HHI", data, offset)
        if kind == 28:
            out.append(struct.unpack_from("<QIIB", data, offset + 8))
        offset += 8 + size
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--probe", default=os.path.join(HERE, "..", "build", "lib", "libpython_stack_probe.so"))
    p.add_argument("--rate", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--depth", type=int, default=30)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--block-s", type=float, default=0.5)
    a = p.parse_args()
    lib = ctypes.CDLL(a.probe)
    stop = threading.Event()

    def idle():
        stop.wait()

    helpers = [threading.Thread(target=idle, daemon=True) for _ in range(a.threads)]
    for t in helpers:
        t.start()
    folder = tempfile.mkdtemp()
    speed = {"off": [], "on": []}
    sampler_cpu = {"off": [], "on": []}
    samples_per_block = []
    work_block(a.depth, 0.2)  # warm-up
    for r in range(a.rounds):
        for mode in (("off", "on") if r % 2 == 0 else ("on", "off")):
            path = os.path.join(folder, f"r{r}.gslog")
            if mode == "on" and lib.gpuscope_probe_sampling_open(path.encode(), a.rate) != 1:
                print("python_sampling_cpu_cost: the sampler did not start (no CPython it knows?)", file=sys.stderr)
                return 2
            time.sleep(0.3)  # the resolver checks the layout with the GIL before the first sample
            m0 = time.monotonic_ns()  # the probe stamps samples with CLOCK_MONOTONIC
            w0, p0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
            speed[mode].append(work_block(a.depth, a.block_s))
            w1, p1, t1 = time.perf_counter(), time.process_time(), time.thread_time()
            m1 = time.monotonic_ns()
            sampler_cpu[mode].append(((p1 - p0) - (t1 - t0)) / (w1 - w0))
            if mode == "on":
                lib.gpuscope_probe_sampling_close()
                main_tid = threading.get_native_id()
                mine = [s for s in samples_in(path) if s[1] == main_tid and s[2] != 0 and m0 <= s[0] <= m1]
                samples_per_block.append(len(mine))
    stop.set()
    off, on = statistics.median(speed["off"]), statistics.median(speed["on"])
    added = 100 * (off / on - 1)
    cpu_on, cpu_off = statistics.median(sampler_cpu["on"]), statistics.median(sampler_cpu["off"])
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {a.rounds} rounds of {a.block_s} s blocks, "
          f"stack {a.depth} frames deep, {a.threads} idle threads + main, sampler at {a.rate} Hz")
    print(f"  workload speed (median iterations/s): off {off:,.0f}, on {on:,.0f}: time added {added:+.2f} %")
    print(f"  CPU outside the main thread per wall second: off {100 * cpu_off:.2f} %, on {100 * cpu_on:.2f} % "
          f"(the sampler: {100 * (cpu_on - cpu_off):.2f} % of one core)")
    print(f"  main-thread samples with a stack per 'on' block: {samples_per_block} "
          f"(at {a.rate} Hz: {a.rate * a.block_s:.0f}; fewer when the sampler's 25 % CPU cap lowers its rate)")
    ok = all(n > 0.3 * a.rate * a.block_s for n in samples_per_block)
    print("  samples verified" if ok else "  TOO FEW SAMPLES: the sampler did not keep up")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
