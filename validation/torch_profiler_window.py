#!/usr/bin/env python3
"""Runs a PyTorch training script under torch.profiler over the steps the script itself
brackets with torch.cuda.profiler.start()/stop() -- the cudaProfilerStart/Stop window that
`gpuscope trace --capture-range=cudaProfilerApi` records -- and writes what the profiler saw.

The profiler (CPU + CUDA activities, record_shapes off) replaces the script's
torch.cuda.profiler.start/stop: it starts and stops there, each after
torch.cuda.synchronize(). The script runs as __main__ in this process (runpy) with its own
arguments. Default script: examples/pytorch/cnn_train.py --steps 15 (steps 5-10).

Output JSON: {"kernels": {name: count}, "kernel_time_us": {name: total µs (Chrome trace,
cat=kernel)}, "key_averages_self_cuda_us": {kernel: self CUDA µs of prof.key_averages()},
"ops": {operator: {"count", "self_device_us", "cpu_total_us"}} (every other key of
key_averages(): operators, backward nodes, record_function ranges), "op_kernels": {operator:
{kernel: [count, µs]}} (each kernel's operator by the Chrome trace's External id), "total",
"gpu_memcpy", "gpu_memset", "torch_version", "script"}.
Usage: torch_profiler_window.py --out JSON [-- SCRIPT.py ARGS...]
"""
import argparse
import collections
import json
import runpy
import sys
import tempfile
import warnings
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

REPO = Path(__file__).resolve().parents[1]


def run_script(command, prof):
    """Runs command[0] as __main__ with command[1:] as its arguments, the profiler in place of
    torch.cuda.profiler.start/stop. Returns the script's exit status."""
    state = {"started": False}

    def start():
        torch.cuda.synchronize()
        prof.start()
        state["started"] = True

    def stop():
        torch.cuda.synchronize()
        prof.stop()

    torch.cuda.profiler.start, torch.cuda.profiler.stop = start, stop
    script = str(Path(command[0]).resolve())
    sys.argv = [script] + command[1:]
    sys.path.insert(0, str(Path(script).parent))
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    if not state["started"]:
        raise SystemExit(f"torch_profiler_window: {script} never called torch.cuda.profiler.start()")
    return code


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- SCRIPT.py ARGS...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        command = [str(REPO / "examples/pytorch/cnn_train.py"), "--steps", "15"]
    warnings.filterwarnings("ignore", message=".*Profiler clears events.*")  # one start/stop cycle only
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    code = run_script(command, prof)
    with tempfile.TemporaryDirectory() as tmp:
        chrome = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(chrome))
        events = json.loads(chrome.read_text()).get("traceEvents", [])
    by_cat = collections.Counter(e.get("cat") for e in events if e.get("ph") == "X")
    kernel_events = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    kernels = collections.Counter(e["name"] for e in kernel_events)
    kernel_time_us = collections.defaultdict(float)
    for e in kernel_events:
        kernel_time_us[e["name"]] += float(e.get("dur", 0))
    # Each kernel's operator: the cpu_op with its "External id" (the innermost operator
    # around its launch). {operator: {kernel: [count, total µs]}}
    op_of = {e["args"]["External id"]: e["name"] for e in events
             if e.get("ph") == "X" and e.get("cat") == "cpu_op" and "External id" in e.get("args", {})}
    op_kernels = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0.0]))
    for e in kernel_events:
        k = op_kernels[op_of.get(e.get("args", {}).get("External id"), "(no operator)")][e["name"]]
        k[0] += 1
        k[1] += float(e.get("dur", 0))
    self_cuda = {}
    for evt in prof.key_averages():
        if evt.key in kernels:
            self_cuda[evt.key] = float(getattr(evt, "self_device_time_total", getattr(evt, "self_cuda_time_total", 0)))
    ops = {}  # every other key of key_averages(): operators (forward and backward), record_function ranges
    for evt in prof.key_averages():
        # Kernels, copies, CUDA runtime/driver calls (cudaLaunchKernel, cuLaunchKernel) and the
        # profiler's own events are not operators.
        if (evt.key in kernels or evt.key.startswith(("cuda", "Memcpy", "Memset", "Activity Buffer", "Command Buffer"))
                or (evt.key.startswith("cu") and evt.key[2:3].isupper())):
            continue
        ops[evt.key] = {"count": int(evt.count),
                        "self_device_us": float(getattr(evt, "self_device_time_total",
                                                        getattr(evt, "self_cuda_time_total", 0))),
                        "cpu_total_us": float(evt.cpu_time_total)}
    report = {
        "source": "torch.profiler (Chrome trace, cat=kernel)",
        "ops": ops,
        "torch_version": torch.__version__,
        "script": command,
        "total": sum(kernels.values()),
        "gpu_memcpy": by_cat.get("gpu_memcpy", 0),
        "gpu_memset": by_cat.get("gpu_memset", 0),
        "kernels": dict(kernels.most_common()),
        "kernel_time_us": dict(kernel_time_us),
        "key_averages_self_cuda_us": self_cuda,
        "op_kernels": {op: dict(ks) for op, ks in op_kernels.items()},
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"torch.profiler over {Path(command[0]).name}'s profiler window: {report['total']} kernels, "
          f"{len(kernels)} names, {report['gpu_memcpy']} memcpys, {report['gpu_memset']} memsets -> {args.out}")
    return code if code else (0 if report["total"] > 0 else 1)


if __name__ == "__main__":
    sys.exit(main())
