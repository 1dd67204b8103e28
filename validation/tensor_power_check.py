#!/usr/bin/env python3
"""Why tensor_fp16 sits below tensor_bf16, and whether the copy's size moves dram_copy (issue 43).

Two measurements on one GPU, in one process, alternating so that drift reaches every case alike:

1. torch.matmul 8192^3, bf16 and fp16, with random normal inputs and with constant inputs (every
   element 1/64: the same values every cycle, so the multipliers barely toggle), each case a
   --seconds loop of back-to-back GEMMs timed with CUDA events, --rounds rounds in a rotated
   order. A thread reads NVML every 10 ms meanwhile: SM clock (nvmlDeviceGetClockInfo, NVML_CLOCK_SM)
   and board power (nvmlDeviceGetPowerUsage). Per case: median TFLOP/s, mean SM clock, mean power,
   and FLOP per SM per cycle (TFLOP/s / (SMs x clock)): if fp16 and bf16 do the same work per cycle
   but fp16 runs at a lower clock at the same power, the gap is the power its data draws, not the
   kernel.
2. dst.copy_(src) (cudaMemcpyAsync device to device) of exactly 4.00 GiB and of gpuscope's dram_copy
   buffer (--copy-bytes, default 4.06 GiB as on a 132-SM H100), 10 copies per round, rounds alternating;
   read + write bytes per second, best and median.

Prints a markdown report and one ``RESULT ...`` line per case; --json writes the numbers.
Exit 0 when it measured, 2 without a GPU, torch or NVML.
"""
import argparse
import ctypes
import json
import statistics
import sys
import threading
import time


class Nvml:
    """The few NVML calls needed, through ctypes (no pynvml)."""

    def __init__(self, index):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise RuntimeError("nvmlInit_v2 failed")
        self.handle = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.handle)) != 0:
            raise RuntimeError("nvmlDeviceGetHandleByIndex_v2 failed")

    def sm_clock_mhz(self):
        v = ctypes.c_uint()
        return v.value if self.lib.nvmlDeviceGetClockInfo(self.handle, 1, ctypes.byref(v)) == 0 else None

    def power_w(self):
        v = ctypes.c_uint()
        return v.value / 1000.0 if self.lib.nvmlDeviceGetPowerUsage(self.handle, ctypes.byref(v)) == 0 else None


class Sampler:
    """Reads SM clock and power every `period` seconds on a thread until stopped."""

    def __init__(self, nvml, period=0.01):
        self.nvml, self.period, self.clocks, self.powers = nvml, period, [], []
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop_flag.is_set():
            c, p = self.nvml.sm_clock_mhz(), self.nvml.power_w()
            if c:
                self.clocks.append(c)
            if p:
                self.powers.append(p)
            time.sleep(self.period)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join()


def gemm_case(torch, nvml, dtype, data, seconds, size=8192):
    if data == "random":
        a = torch.randn(size, size, device="cuda", dtype=dtype)
        b = torch.randn(size, size, device="cuda", dtype=dtype)
    else:
        a = torch.full((size, size), 1.0 / 64, device="cuda", dtype=dtype)
        b = torch.full((size, size), 1.0 / 64, device="cuda", dtype=dtype)
    for _ in range(5):
        c = torch.matmul(a, b)
    torch.cuda.synchronize()
    times = []
    with Sampler(nvml) as s:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(10)]
            for e0, e1 in ev:
                e0.record()
                c = torch.matmul(a, b)
                e1.record()
            torch.cuda.synchronize()
            times += [e0.elapsed_time(e1) * 1e-3 for e0, e1 in ev]
    expect = size * (1.0 / 64) ** 2 if data == "const" else None
    if expect is not None and abs(float(c[0, 0]) - expect) > 1e-2 * expect:
        raise RuntimeError(f"GEMM result {float(c[0, 0])} != {expect}")
    flop = 2.0 * size ** 3
    return {"tflops": flop / statistics.median(times) / 1e12, "best_tflops": flop / min(times) / 1e12,
            "gemms": len(times), "clock_mhz": statistics.mean(s.clocks) if s.clocks else None,
            "power_w": statistics.mean(s.powers) if s.powers else None}


def copy_rounds(torch, sizes, rounds):
    out = {n: [] for n in sizes}
    bufs = {}
    for n in sizes:
        src = torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255)
        bufs[n] = (src, torch.empty_like(src))
    for r in range(rounds):
        for n in (sizes if r % 2 == 0 else sizes[::-1]):
            src, dst = bufs[n]
            for _ in range(2):
                dst.copy_(src)
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(10)]
            for e0, e1 in ev:
                e0.record()
                dst.copy_(src)
                e1.record()
            torch.cuda.synchronize()
            out[n] += [2.0 * n / (e0.elapsed_time(e1) * 1e-3) for e0, e1 in ev]
    for n, (src, dst) in bufs.items():
        if not torch.equal(src[-(1 << 20):], dst[-(1 << 20):]):
            raise RuntimeError(f"copy of {n} bytes: destination differs")
    return {n: {"median_gbs": statistics.median(v) / 1e9, "best_gbs": max(v) / 1e9, "copies": len(v)}
            for n, v in out.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=2.0, help="seconds of GEMMs per case per round (default 2)")
    p.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    p.add_argument("--copy-bytes", type=int, default=4359979008,
                   help="gpuscope's dram_copy buffer in bytes (default 4359979008, 4.06 GiB: 4 GiB rounded up to "
                        "132 SMs x 256 threads x 128 16-byte vectors)")
    p.add_argument("--json", help="write the numbers here")
    a = p.parse_args()
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device")
        nvml = Nvml(torch.cuda.current_device())
    except Exception as e:
        print(f"tensor_power_check: cannot measure ({e}): it needs PyTorch with a CUDA GPU and NVML "
              f"(libnvidia-ml.so.1, the NVIDIA driver's); run it on the GPU machine (scripts/gpu-run OUT tensor_power)",
              file=sys.stderr)
        return 2
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    cases = [(torch.bfloat16, "bf16", "random"), (torch.float16, "fp16", "random"),
             (torch.bfloat16, "bf16", "const"), (torch.float16, "fp16", "const")]
    runs = {f"{n} {d}": [] for _, n, d in cases}
    for r in range(a.rounds):
        for dtype, name, data in cases[r % len(cases):] + cases[:r % len(cases)]:
            runs[f"{name} {data}"].append(gemm_case(torch, nvml, dtype, data, a.seconds))
            torch.cuda.empty_cache()
    result = {"device": torch.cuda.get_device_name(0), "sms": sms, "torch": torch.__version__, "gemm": {}}
    print(f"# fp16 vs bf16 GEMM and the copy's size — {result['device']}, torch {torch.__version__}\n")
    print(f"torch.matmul 8192^3, {a.rounds} rounds x {a.seconds} s per case, rotated; medians over rounds.\n")
    print("| case | TFLOP/s | mean SM clock (MHz) | mean power (W) | FLOP/SM/cycle |")
    print("|---|---:|---:|---:|---:|")
    for key, rs in runs.items():
        tf = statistics.median(r["tflops"] for r in rs)
        clk = statistics.median(r["clock_mhz"] for r in rs if r["clock_mhz"]) if any(r["clock_mhz"] for r in rs) else None
        pw = statistics.median(r["power_w"] for r in rs if r["power_w"]) if any(r["power_w"] for r in rs) else None
        per = tf * 1e12 / (sms * clk * 1e6) if clk else None
        result["gemm"][key] = {"tflops": tf, "clock_mhz": clk, "power_w": pw, "flop_per_sm_cycle": per, "rounds": rs}
        print(f"| {key} | {tf:.1f} | {clk or float('nan'):.0f} | {pw or float('nan'):.0f} | {per or float('nan'):.0f} |")
        print(f"RESULT gemm case={key.replace(' ', '_')} tflops={tf:.2f} clock_mhz={clk} power_w={pw} "
              f"flop_per_sm_cycle={per}", file=sys.stderr)
    g = result["gemm"]
    for data in ("random", "const"):
        b, f = g[f"bf16 {data}"], g[f"fp16 {data}"]
        line = f"fp16/bf16 {data}: TFLOP/s {100 * (f['tflops'] / b['tflops'] - 1):+.1f} %"
        if b["flop_per_sm_cycle"] and f["flop_per_sm_cycle"]:
            line += (f", per cycle {100 * (f['flop_per_sm_cycle'] / b['flop_per_sm_cycle'] - 1):+.1f} %, "
                     f"clock {100 * (f['clock_mhz'] / b['clock_mhz'] - 1):+.1f} %")
        print(f"\n- {line}")
    torch.cuda.empty_cache()
    sizes = [4 << 30, a.copy_bytes]
    free = torch.cuda.mem_get_info()[0]
    if 2 * sum(sizes) < 0.9 * free:
        cp = copy_rounds(torch, sizes, 6)
        result["copy"] = {str(n): v for n, v in cp.items()}
        print("\n| dst.copy_(src) | best GB/s | median GB/s | copies |\n|---|---:|---:|---:|")
        for n, v in cp.items():
            print(f"| {n / 2**30:.3f} GiB | {v['best_gbs']:.1f} | {v['median_gbs']:.1f} | {v['copies']} |")
    else:
        print(f"\ncopies left out: {2 * sum(sizes) / 2**30:.1f} GiB needed, {free / 2**30:.1f} GiB free")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
