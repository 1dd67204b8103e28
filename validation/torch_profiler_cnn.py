#!/usr/bin/env python3
"""Runs examples/pytorch/cnn_train.py's training under torch.profiler for steps 5-10 and
writes the GPU kernels it saw, per name, as JSON (for validation/compare_kernels.py).

The profiler (CPU + CUDA activities) is started before step 5 and stopped after step 10,
each after torch.cuda.synchronize() -- the same window cnn_train.py opens with
cudaProfilerStart/Stop for `gpuscope trace --capture-range=cudaProfilerApi`. Kernels are
read from the exported Chrome trace (events of category 'kernel'); memcpy and memset
events are counted separately. Output: {"kernels": {name: count}, "kernel_time_us": {name:
total duration in µs from the Chrome trace}, "key_averages_self_cuda_us": {name: self CUDA
time total of prof.key_averages()}, "total": N, ...}.
"""
import argparse
import collections
import json
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "pytorch"))
import cnn_train  # noqa: E402  (sets CUBLAS_WORKSPACE_CONFIG before importing torch)
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--deterministic", action="store_true")
    args = parser.parse_args()
    first, last = cnn_train.PROFILER_START_STEP, cnn_train.PROFILER_STOP_STEP
    cnn_train.configure(args.deterministic)
    warnings.filterwarnings("ignore", message=".*Profiler clears events.*")  # one start/stop cycle only
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])

    def on_step(i, phase):
        if phase == "before" and i == first:
            torch.cuda.synchronize()
            prof.start()
        if phase == "after" and i == last:
            torch.cuda.synchronize()
            prof.stop()

    losses, _ = cnn_train.train(args.steps, profiler_range=False, on_step=on_step)
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
        "steps": [first, last],
        "total": sum(kernels.values()),
        "gpu_memcpy": by_cat.get("gpu_memcpy", 0),
        "gpu_memset": by_cat.get("gpu_memset", 0),
        "final_loss": losses[-1],
        "kernels": dict(kernels.most_common()),
        "kernel_time_us": dict(kernel_time_us),
        "key_averages_self_cuda_us": self_cuda,
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"torch.profiler steps {first}-{last}: {report['total']} kernels, {len(kernels)} names, "
          f"{report['gpu_memcpy']} memcpys, {report['gpu_memset']} memsets -> {args.out}")
    return 0 if report["total"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
