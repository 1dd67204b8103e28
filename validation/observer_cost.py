#!/usr/bin/env python3
"""What recording PyTorch operators and modules costs a training step, measured inside one process.

Two runs of this script on the same workload give the issue-41 shares without comparing
separate processes (whose untraced step time moves by ±20 % on the GPU machine):

* under ``gpuscope trace --pytorch=ops,modules`` (the observer route): blocks of --block steps
  alternate between ``off`` (gpuscope's RecordFunction observer removed with uninstall_ops(),
  nn.Module.__call__ the original), ``ops`` (observer installed, no module ranges),
  ``modules`` (module ranges alone: the wrapper's cost inside a real step), ``ops,modules`` (both) and ``empty callback`` (a global RecordFunction callback that does
  nothing: the floor of any observer built on RecordFunction): what the observer and the module
  wrapper add on top of the CUPTI tracing that stays on throughout; with --capture also ``capture
  off`` (recording stopped through cudaProfilerStop: what gpuscope's API callbacks add, kernel
  records excepted);
* without gpuscope: blocks alternate between ``off``, ``torch.profiler`` (CPU + CUDA) and
  ``torch.profiler cpu`` (CPU only); each profiler block is started before the block and
  stopped after it (start-up and event processing outside the timed steps, one untimed step
  inside first). One more CPU-only block, untimed, counts the RecordFunction calls per step
  (PyTorch's profiler events: operators, backward nodes, user scopes), the calls the observer
  sees;
* with ``--kinds sampling`` under ``gpuscope trace --python-sampling`` (issue 42): blocks alternate
  between ``off`` (the sampler paused through gpuscope_python_sampling_pause) and ``sampling RATE
  Hz`` (running): what reading every Python thread's stack RATE times a second adds.

Workloads: resnet18 (examples/pytorch/resnet_train.py: torchvision resnet18, batch 32,
3x112x112, SGD), vit (examples/pytorch/vit_train.py's model: timm ViT-S/16, bf16 autocast,
SDPA, AdamW, batch 64), add_loop (1000 x.add_(1) on 32 elements a step, as
examples/pytorch/add_loop.py: launch-bound) or cpu_mlp (no GPU: 4 blocks of Linear, LayerNorm and
GELU on a 16x32 CPU batch, SGD; every step all dispatch, so the observer's own cost per call shows
wherever a CPU torch is installed, e.g. Debian's python3-torch) or cpu_add (no GPU: 2000 y.add_(1)
on one CPU element a step: operator calls and nothing else, 5 RecordFunction calls each in torch
1.13, as the profiler run's calls per step says). Each step ends with loss.item() (the adds:
x[0].item()).
The order of the kinds rotates every round. Per block: ms/step = its wall time / --block, and the
CPU dispatch per step (each step's time before its final .item(): the CPU's own work, recording's
included, which GPU work running meanwhile can hide from the step time); per kind: the medians
over rounds; added = kind − off; paired added = the median over rounds of (the kind's block − the
same round's off block), with its quartiles, which a drift slower than a round cancels out of.
Added dispatch over the RecordFunction calls per step is the observer's cost per call inside the
program, to set beside its calibration at exit.

Writes OUT/observer_cost_WORKLOAD_MODE.{md,json} (MODE: observer, profiler or sampling) and prints
``RESULT workload=W mode=M off_ms=... KIND_ms=... [calls_per_step=N]``.
Exit status 2 when the mode's hooks are missing (under gpuscope: not --pytorch=ops through
the observer) or without a GPU, torchvision or timm.

Usage:
  gpuscope trace -o t --pytorch=ops,modules -- python3 validation/observer_cost.py OUT --workload resnet18
  python3 validation/observer_cost.py OUT --workload resnet18
  gpuscope trace -o t --python-sampling -- python3 validation/observer_cost.py OUT --kinds sampling
"""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "pytorch"))


# Seconds the last step's CPU spent before it waited for the GPU (its dispatch: every operator
# call, launch and the tracer's work on them, none of it hidden behind GPU work).
DISPATCH_S = [0.0]


def make_step(torch, workload):
    """step() -> float (the loss, after the step's GPU work) for the workload; None if its library is missing.
    Each step leaves its CPU dispatch time (start to the final .item()) in DISPATCH_S[0]."""
    if workload in ("add_loop", "cpu_add"):
        # add_loop: examples/pytorch/add_loop.py's launch-bound loop, 1000 x.add_(1) on 32 elements a
        # step; cpu_add (no GPU): 2000 on one CPU element, operator calls and nothing else.
        n, x = (1000, torch.zeros(32, device="cuda")) if workload == "add_loop" else (2000, torch.zeros(1))

        def adds():
            t = time.perf_counter()
            for _ in range(n):
                x.add_(1)
            DISPATCH_S[0] = time.perf_counter() - t
            return float(x[0].item() % n)  # 0.0 after every step: the adds ran
        return adds
    if workload == "cpu_mlp":  # no GPU: the observer's own cost wherever a CPU torch is installed
        torch.manual_seed(0)
        net = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(32, 32), torch.nn.LayerNorm(32),
                                                                  torch.nn.GELU())])
        opt = torch.optim.SGD(net.parameters(), lr=1e-3)
        data = torch.randn(16, 32)

        def cpu_step():
            t = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = net(data).square().mean()
            loss.backward()
            opt.step()
            DISPATCH_S[0] = time.perf_counter() - t
            return loss.item()
        return cpu_step
    if workload == "resnet18":
        try:
            import torchvision
        except ImportError:
            return None
        import resnet_train
        model, optimizer, loss_fn, images, labels = resnet_train.make_training(torchvision)
        autocast = None
    else:
        try:
            import timm
        except ImportError:
            return None
        import vit_train
        model, optimizer, loss_fn, images, labels = vit_train.make_training(timm)
        autocast = torch.bfloat16

    def step():
        t = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        if autocast is None:
            loss = loss_fn(model(images), labels)
        else:
            with torch.autocast("cuda", dtype=autocast):
                loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        DISPATCH_S[0] = time.perf_counter() - t
        return loss.item()
    return step


def observer_kinds(torch, capture=False):
    """{kind: (enter, leave)} toggling gpuscope's observer and module wrapper, or None if not installed.
    capture (under --capture-range=cudaProfilerApi --capture-range-end=repeat): one more kind, ``capture
    off``: gpuscope's CUDA API callbacks and copy/memset records stopped too (cudaProfilerStop; only
    the kernel records, on since the first window, stay), against which ``off`` is what that part of
    CUPTI tracing adds."""
    from torch.nn.modules.module import Module
    site = sys.modules.get("sitecustomize")
    observer = getattr(site, "installed", {}).get("ops")
    wrapped = Module.__call__
    original = getattr(wrapped, "__wrapped__", None)
    if observer is None or not hasattr(observer, "uninstall_ops") or original is None:
        return None
    shapes = "shapes" in site._wanted()

    def setting(ops, modules, floor=False):
        def enter():
            if ops:
                observer.install_ops(shapes)
            if floor:
                observer.install_floor()
            Module.__call__ = wrapped if modules else original

        def leave():
            observer.uninstall_ops()
            observer.uninstall_floor()
            Module.__call__ = wrapped
        return enter, leave
    observer.uninstall_ops()
    kinds = {"off": setting(False, False), "ops": setting(True, False), "modules": setting(False, True),
             "ops,modules": setting(True, True)}
    if hasattr(observer, "install_floor"):
        kinds["empty callback"] = setting(False, False, floor=True)
    if capture:
        import torch.cuda.profiler as cuda_profiler
        cuda_profiler.start()  # recording from here on; "capture off" stops it for its blocks

        def capture_off():
            cuda_profiler.stop()
            Module.__call__ = original

        def capture_on():
            cuda_profiler.start()
            Module.__call__ = wrapped
        kinds["capture off"] = (capture_off, capture_on)
    return kinds


def pause_kinds(what):
    """{kind: (enter, leave)} pausing and resuming gpuscope trace's Python sampler (what="sampling":
    gpuscope_python_sampling_pause) or call sites (what="callsites": gpuscope_python_callsites_pause),
    found in the loaded collector with RTLD_NOLOAD; None when this process has none."""
    import ctypes
    try:
        lib = ctypes.CDLL(os.environ.get("CUDA_INJECTION64_PATH", ""), mode=os.RTLD_NOLOAD)
        pause = getattr(lib, f"gpuscope_python_{what}_pause")
    except (OSError, AttributeError):
        return None
    pause.argtypes = [ctypes.c_int]
    pause.restype = ctypes.c_int
    if pause(1) != 1:
        return None
    on = (f"sampling {os.environ.get('GPUSCOPE_PYTHON_SAMPLING', '?')} Hz" if what == "sampling"
          else f"callsites {os.environ.get('GPUSCOPE_PYTHON_CALLSITES', '?')}")
    return {"off": (lambda: pause(1), lambda: None), on: (lambda: pause(0), lambda: pause(1))}


def profiler_kinds(torch):
    """{kind: (enter, leave)}: no profiler, torch.profiler CPU + CUDA, torch.profiler CPU only."""
    from torch.profiler import ProfilerActivity, profile
    active = {}

    def setting(activities):
        def enter():
            if activities:
                active["p"] = profile(activities=activities)
                active["p"].start()

        def leave():
            p = active.pop("p", None)
            if p is not None:
                p.stop()
        return enter, leave
    kinds = {"off": setting(None), "torch.profiler": setting([ProfilerActivity.CPU, ProfilerActivity.CUDA]),
             "torch.profiler cpu": setting([ProfilerActivity.CPU])}
    if not torch.cuda.is_available():
        del kinds["torch.profiler"]
    return kinds


def calls_per_step(torch, step, block):
    """RecordFunction calls per step, counted by PyTorch's CPU profiler over one block."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as p:
        for _ in range(block):
            step()
    return len(p.events()) / block


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="folder for observer_cost_WORKLOAD_MODE.md and .json")
    p.add_argument("--workload", choices=("resnet18", "vit", "add_loop", "cpu_mlp", "cpu_add"), default="resnet18")
    p.add_argument("--rounds", type=int, default=15, help="rounds of one block of each kind (default 15)")
    p.add_argument("--block", type=int, default=10, help="timed steps per block (default 10)")
    p.add_argument("--warmup", type=int, default=10, help="steps before measuring (default 10)")
    p.add_argument("--kinds", choices=("auto", "sampling", "callsites"), default="auto",
                   help="auto: the observer kinds under gpuscope trace, the profiler kinds without it; sampling: "
                        "the Python sampler paused and running (under gpuscope trace --python-sampling); callsites: "
                        "the Python call sites paused and taken (under gpuscope trace --python-callsites=MODE)")
    p.add_argument("--capture", action="store_true",
                   help="under gpuscope trace --capture-range=cudaProfilerApi --capture-range-end=repeat: also a "
                        "'capture off' kind (gpuscope's API callbacks and copy records stopped between blocks)")
    a = p.parse_args()
    import torch
    if not torch.cuda.is_available() and not a.workload.startswith("cpu_"):
        print("observer_cost: no CUDA device (--workload cpu_mlp or cpu_add runs without one)", file=sys.stderr)
        return 2
    traced = bool(os.environ.get("CUDA_INJECTION64_PATH"))
    if a.kinds != "auto":
        kinds = pause_kinds(a.kinds) if traced else None
        if kinds is None:
            print(f"observer_cost: no Python {a.kinds} to pause: run under gpuscope trace "
                  f"--python-{'sampling' if a.kinds == 'sampling' else 'callsites=sync'}", file=sys.stderr)
            return 2
    else:
        kinds = observer_kinds(torch, a.capture) if traced else profiler_kinds(torch)
    if kinds is None:
        print("observer_cost: gpuscope's operator observer is not installed: run under gpuscope trace "
              "--pytorch=ops,modules (the observer route)", file=sys.stderr)
        return 2
    step = make_step(torch, a.workload)
    if step is None:
        print(f"observer_cost: {a.workload} needs {'torchvision' if a.workload == 'resnet18' else 'timm'}",
              file=sys.stderr)
        return 2
    for _ in range(a.warmup):
        value = step()
    names = list(kinds)
    ms = {k: [] for k in names}
    dispatch = {k: [] for k in names}
    for r in range(a.rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            enter, leave = kinds[k]
            enter()
            value = step()  # untimed: the first step after a switch
            t0 = time.perf_counter()
            cpu = 0.0
            for _ in range(a.block):
                value = step()
                cpu += DISPATCH_S[0]
            ms[k].append((time.perf_counter() - t0) * 1e3 / a.block)
            dispatch[k].append(cpu * 1e3 / a.block)
            leave()
    if value != value or (a.workload in ("add_loop", "cpu_add") and value != 0.0):
        print(f"observer_cost: wrong result {value} (loss not finite, or adds missing)", file=sys.stderr)
        return 1
    mode = a.kinds if a.kinds != "auto" else "observer" if traced else "profiler"
    def medians_and_added(blocks):  # {kind: median over rounds}, {kind: median - off's}
        med = {k: statistics.median(v) for k, v in blocks.items()}
        return med, {k: v - med["off"] for k, v in med.items() if k != "off"}

    def paired(blocks):
        # {kind: (median, first quartile, third quartile)} of the round's block minus the same round's
        # off block: a drift slower than a round (the machine's load, its clocks) cancels in each pair.
        out = {}
        for k, v in blocks.items():
            if k != "off":
                diffs = [x - y for x, y in zip(v, blocks["off"])]
                q = statistics.quantiles(diffs, n=4) if len(diffs) > 1 else [diffs[0]] * 3
                out[k] = (statistics.median(diffs), q[0], q[2])
        return out
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU only"
    result = {"workload": a.workload, "mode": mode, "device": device,
              "torch": torch.__version__, "rounds": a.rounds, "block_steps": a.block, "warmup_steps": a.warmup,
              "blocks_ms": ms, "blocks_dispatch_ms": dispatch}
    result["median_ms_per_step"], result["added_ms_per_step"] = medians_and_added(ms)
    result["median_dispatch_ms_per_step"], result["added_dispatch_ms_per_step"] = medians_and_added(dispatch)
    result["paired_added_ms_per_step"] = paired(ms)  # [median, q1, q3] of per-round differences
    if mode == "profiler":
        result["calls_per_step"] = calls_per_step(torch, step, a.block)
    lines = [f"# In-process cost per step: {a.workload}, {mode} kinds", "",
             f"{result['device']}, torch {result['torch']}; {a.rounds} rounds of one block of {a.block} steps per "
             f"kind (order rotated each round, one untimed step after each switch), after {a.warmup} warm-up steps.",
             "CPU dispatch: each step's time before its final `.item()` (the CPU's own work, none of it hidden "
             "behind GPU work).",
             "Paired added: the median over rounds of the kind's block minus the same round's off block, with the "
             "quartiles of those differences (the noise of the pairing).",
             "", "| kind | median ms/step | block min–max | added ms/step | paired added ms/step (q1 – q3) | "
             "CPU dispatch ms/step | added dispatch ms/step |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for k in names:
        added = "" if k == "off" else f"{result['added_ms_per_step'][k]:+.3f}"
        pa = "" if k == "off" else "{:+.3f} ({:+.3f} – {:+.3f})".format(*result["paired_added_ms_per_step"][k])
        dadded = "" if k == "off" else f"{result['added_dispatch_ms_per_step'][k]:+.3f}"
        lines.append(f"| {k} | {result['median_ms_per_step'][k]:.3f} | {min(ms[k]):.3f}–{max(ms[k]):.3f} | {added} | "
                     f"{pa} | {result['median_dispatch_ms_per_step'][k]:.3f} | {dadded} |")
    if "calls_per_step" in result:
        lines += ["", f"RecordFunction calls per step (PyTorch's CPU profiler events): {result['calls_per_step']:.0f}"]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"observer_cost_{a.workload}_{mode}"
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1))
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    fields = " ".join(f"{k.replace(' ', '_').replace(',', '+')}_ms={v:.4f}"
                      for k, v in result["median_ms_per_step"].items())
    extra = f" calls_per_step={result['calls_per_step']:.0f}" if "calls_per_step" in result else ""
    print(f"RESULT workload={a.workload} mode={mode} {fields}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
