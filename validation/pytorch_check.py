#!/usr/bin/env python3
"""gpuscope's PyTorch operators against torch.profiler's, on the CNN example, resnet18 or a ViT.

Runs, as separate processes on the same training (--workload cnn: examples/pytorch/
cnn_train.py, resnet18: examples/pytorch/resnet_train.py, vit: examples/pytorch/vit_train.py
(timm ViT-S/16, bf16); the steps --window FIRST LAST that
the script opens with cudaProfilerStart/Stop), alternating, --rounds times each:
  1. torch.profiler (CPU + CUDA) over those steps (validation/torch_profiler_window.py):
     key_averages() per operator name: calls and self CUDA time; per operator, the kernels
     (Chrome trace, by External id) with count and time;
  2. `gpuscope trace --pytorch=ops --capture-range=cudaProfilerApi`, then `gpuscope stats -r
     op_sum --format json`: calls and Self GPU per operator name; per operator, the kernels
     (torch_op_activities in the trace).
Compares, per operator name: the call counts (must be equal in every round) and the self
GPU time summed over the rounds (within 2 % where torch.profiler's is over 50 µs per round;
smaller totals are listed, not judged). Each tool's own round-to-round spread is shown as
the noise floor, and for an operator off by more than 2 % the per-kernel counts and times of
both tools tell a kernel charged to another operator (counts differ) from kernels that ran
at another speed (same kernels, other durations).
--launch-blocking runs both with CUDA_LAUNCH_BLOCKING=1: every kernel then starts on an idle
GPU in both processes, so kernel durations no longer depend on how far each tool lets the
CPU run ahead of the GPU (a tool's own cost changes the GPU's pacing, and with it some
kernels' durations by a few %).
gpuscope records operators the way `gpuscope trace` chooses (its own observer; PyTorch's NVTX
observer with GPUSCOPE_TORCH_OPS_ROUTE=nvtx in the environment).
Writes OUT/pytorch_check_WORKLOAD[_blocking].md and .json. Exit 1 when a count differs or a time is off.
Usage: pytorch_check.py GPUSCOPE_BIN OUT_DIR [--workload cnn] [--steps 60] [--window 5 54] [--rounds 2]
                        [--launch-blocking]
"""
import argparse
import collections
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OP_KERNELS_SQL = """
SELECT o.name, s.value, COUNT(*), SUM(k.end_ns - k.start_ns) FROM torch_op_activities t
JOIN v_torch_ops o ON o.nvtx_id = t.op_nvtx_id
JOIN kernels k ON k.pid = t.pid AND k.correlation_id = t.correlation_id
JOIN strings s ON s.id = k.name_id GROUP BY 1, 2"""
SCRIPTS = {"cnn": "examples/pytorch/cnn_train.py", "resnet18": "examples/pytorch/resnet_train.py",
           "vit": "examples/pytorch/vit_train.py"}


def workload(a):
    return [str(REPO / SCRIPTS[a.workload]), "--steps", str(a.steps), "--window", *map(str, a.window)]


def env(a, torch_run=False):
    e = dict(os.environ)
    if a.launch_blocking:
        e["CUDA_LAUNCH_BLOCKING"] = "1"
    if torch_run and a.torch_cupti:  # torch.profiler on the CUPTI library gpuscope uses
        e["LD_PRELOAD"] = a.torch_cupti
    return e


def torch_round(out, i, a):
    path = out / f"torch_profiler_ops_{a.tag}_{i}.json"
    subprocess.run([sys.executable, str(REPO / "validation/torch_profiler_window.py"), "--out", str(path), "--",
                    *workload(a)], check=True, env=env(a, torch_run=True))
    doc = json.loads(path.read_text())
    ops = {n: {"count": r["count"], "self_gpu_us": r["self_device_us"]} for n, r in doc["ops"].items()}
    return ops, {op: {k: tuple(v) for k, v in ks.items()} for op, ks in doc["op_kernels"].items()}


def gpuscope_round(out, i, a):
    trace = out / f"{a.tag}-ops-{i}"
    subprocess.run([a.gpuscope, "trace", "-o", str(trace), "-f", "-q", "--pytorch=ops",
                    "--capture-range=cudaProfilerApi", "--", sys.executable, *workload(a)], check=True, env=env(a))
    doc = json.loads(subprocess.run([a.gpuscope, "stats", f"{trace}.sqlite", "-r", "op_sum", "--format", "json"],
                                    check=True, capture_output=True, text=True).stdout)
    rep = doc["reports"]["op_sum"]
    cols = [c["name"] for c in rep["columns"]]
    ops = {row[cols.index("Name")]: {"count": row[cols.index("Calls")], "self_gpu_us": row[cols.index("Self GPU")] / 1e3}
           for row in rep["rows"]}
    op_kernels = collections.defaultdict(dict)
    with sqlite3.connect(f"file:{trace}.sqlite?mode=ro", uri=True) as db:
        for op, kernel, n, ns in db.execute(OP_KERNELS_SQL):
            op_kernels[op][kernel] = (n, ns / 1e3)
    return ops, dict(op_kernels)


def spread(values):
    """Largest relative distance (%) of one round's value from the rounds' mean."""
    mean = sum(values) / len(values)
    return 0.0 if mean <= 0 else 100.0 * max(abs(v - mean) for v in values) / mean


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("gpuscope")
    p.add_argument("out")
    p.add_argument("--workload", choices=sorted(SCRIPTS), default="cnn")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--window", type=int, nargs=2, default=(5, 54), metavar=("FIRST", "LAST"))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--launch-blocking", action="store_true", help="CUDA_LAUNCH_BLOCKING=1 in both tools' runs")
    p.add_argument("--torch-cupti", default="", help="libcupti.so to preload in torch.profiler's runs (the one "
                   "gpuscope loads: both tools then time kernels with the same CUPTI)")
    a = p.parse_args()
    a.tag = a.workload + ("_blocking" if a.launch_blocking else "") + ("_samecupti" if a.torch_cupti else "")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tp_rounds, gs_rounds = [], []
    for i in range(a.rounds):  # alternating, so a drift of the machine reaches both tools alike
        tp_rounds.append(torch_round(out, i, a))
        gs_rounds.append(gpuscope_round(out, i, a))
    names = set()
    for ops, _ in tp_rounds + gs_rounds:
        names |= set(ops)

    def per_round(rounds, n, key):
        return [ops.get(n, {}).get(key, 0) for ops, _ in rounds]

    rows, bad_counts, bad_times, judged = [], 0, 0, 0
    for n in names:
        gc, rc = per_round(gs_rounds, n, "count"), per_round(tp_rounds, n, "count")
        gt_r, rt_r = per_round(gs_rounds, n, "self_gpu_us"), per_round(tp_rounds, n, "self_gpu_us")
        gt, rt = sum(gt_r), sum(rt_r)
        count_ok = gc == rc
        bad_counts += not count_ok
        diff = None if rt <= 0 else 100.0 * (gt - rt) / rt
        # A record_function range ("Optimizer.step#Adam.step") gets from torch.profiler the GPU
        # span of its kernels (gpu_user_annotation) as device time; gpuscope charges each kernel
        # to the operator that launched it: only its call count is compared.
        judge = rt > 50.0 * a.rounds and "#" not in n
        time_ok = not judge or (diff is not None and abs(diff) <= 2.0)
        judged += judge
        bad_times += not time_ok
        kernels = []
        if not time_ok:  # which kernels make the difference
            for k in sorted({k for _, ok in gs_rounds + tp_rounds for k in ok.get(n, {})}):
                g = [sum(x) for x in zip(*[ok.get(n, {}).get(k, (0, 0.0)) for _, ok in gs_rounds])]
                r = [sum(x) for x in zip(*[ok.get(n, {}).get(k, (0, 0.0)) for _, ok in tp_rounds])]
                kernels.append({"kernel": k, "gpuscope": g, "torch": r})
        rows.append({"name": n, "gpuscope_calls": gc, "torch_calls": rc, "gpuscope_self_gpu_us": gt,
                     "torch_self_cuda_us": rt, "diff_pct": diff, "gpuscope_spread_pct": spread(gt_r),
                     "torch_spread_pct": spread(rt_r), "count_ok": count_ok, "time_ok": time_ok, "kernels": kernels})
    rows.sort(key=lambda r: -max(r["torch_self_cuda_us"], r["gpuscope_self_gpu_us"]))
    first, last = a.window
    mode = (", CUDA_LAUNCH_BLOCKING=1" if a.launch_blocking else "") + (
        f", torch.profiler on {a.torch_cupti}" if a.torch_cupti else "")
    md = [f"# gpuscope --pytorch=ops vs torch.profiler ({a.workload}, steps {first}-{last}, {a.rounds} rounds each{mode})",
          "", f"{len(names)} operator names; call counts differ for {bad_counts}; self GPU time (sum of the rounds) "
          f"judged for {judged} names (over 50 µs a round), off by more than 2 % for {bad_times}. Spread: the "
          "largest distance of one round from that tool's mean (its own run-to-run noise).", "",
          "| operator | calls gpuscope | calls torch.profiler | self GPU gpuscope (µs) | self CUDA torch.profiler (µs) "
          "| diff | spread gpuscope | spread torch.profiler |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        d = "" if r["diff_pct"] is None else f"{r['diff_pct']:+.2f} %"
        flag = "" if r["count_ok"] and r["time_ok"] else " **✗**"
        calls = lambda c: "/".join(map(str, c))  # noqa: E731  (one count per round)
        md.append(f"| `{r['name']}`{flag} | {calls(r['gpuscope_calls'])} | {calls(r['torch_calls'])} "
                  f"| {r['gpuscope_self_gpu_us']:.1f} | {r['torch_self_cuda_us']:.1f} | {d} "
                  f"| {r['gpuscope_spread_pct']:.1f} % | {r['torch_spread_pct']:.1f} % |")
    off = [r for r in rows if r["kernels"]]
    if off:
        md += ["", "## Kernels of the operators off by more than 2 % (all rounds)", "",
               "| operator | kernel | count gpuscope | count torch.profiler | µs gpuscope | µs torch.profiler | diff |",
               "|---|---|---:|---:|---:|---:|---:|"]
        for r in off:
            for k in r["kernels"]:
                (gn, gus), (rn, rus) = k["gpuscope"] or (0, 0.0), k["torch"] or (0, 0.0)
                d = f"{100.0 * (gus - rus) / rus:+.2f} %" if rus > 0 else ""
                md.append(f"| `{r['name']}` | `{k['kernel'][:90]}` | {gn} | {rn} | {gus:.1f} | {rus:.1f} | {d} |")
    (out / f"pytorch_check_{a.tag}.md").write_text("\n".join(md) + "\n")
    (out / f"pytorch_check_{a.tag}.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("\n".join(md[:3]))
    return 0 if bad_counts == 0 and bad_times == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
