#!/usr/bin/env python3
"""gpuscope's PyTorch operators against torch.profiler's, on the CNN example.

Runs, as separate processes on the same training (examples/pytorch/cnn_train.py, steps 5-10,
the window cnn_train.py opens with cudaProfilerStart/Stop):
  1. torch.profiler (CPU + CUDA) over those steps (validation/torch_profiler_cnn.py):
     key_averages() per operator name: calls and self CUDA time;
  2. `gpuscope trace --pytorch=ops --capture-range=cudaProfilerApi`, then `gpuscope stats -r
     op_sum --format json`: calls and Self GPU per operator name.
Compares, per operator name, the call counts (must be equal) and the self GPU time (within
2 % where it is over 50 µs; smaller totals are listed but not judged: one kernel's jitter).
Writes OUT/pytorch_check.md and .json. Exit 1 when a count differs or a time is off.
Usage: pytorch_check.py GPUSCOPE_BIN OUT_DIR [--steps 15]
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("gpuscope")
    p.add_argument("out")
    p.add_argument("--steps", type=int, default=15)
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tp = out / "torch_profiler_ops.json"
    subprocess.run([sys.executable, str(REPO / "validation/torch_profiler_cnn.py"), "--out", str(tp), "--steps",
                    str(a.steps)], check=True)
    trace = out / "cnn-ops"
    subprocess.run([a.gpuscope, "trace", "-o", str(trace), "-f", "-q", "--pytorch=ops",
                    "--capture-range=cudaProfilerApi", "--", sys.executable,
                    str(REPO / "examples/pytorch/cnn_train.py"), "--steps", str(a.steps)], check=True)
    doc = json.loads(subprocess.run([a.gpuscope, "stats", f"{trace}.sqlite", "-r", "op_sum", "--format", "json"],
                                    check=True, capture_output=True, text=True).stdout)
    rep = doc["reports"]["op_sum"]
    cols = [c["name"] for c in rep["columns"]]
    gs = {row[cols.index("Name")]: {"count": row[cols.index("Calls")], "self_gpu_us": row[cols.index("Self GPU")] / 1e3}
          for row in rep["rows"]}
    ref = json.loads(tp.read_text())["ops"]
    names = sorted(set(gs) | set(ref), key=lambda n: -max(ref.get(n, {}).get("self_device_us", 0),
                                                          gs.get(n, {}).get("self_gpu_us", 0)))
    rows, bad_counts, bad_times, judged = [], 0, 0, 0
    for n in names:
        g, r = gs.get(n), ref.get(n)
        gc, rc = (g or {}).get("count"), (r or {}).get("count")
        gt, rt = (g or {}).get("self_gpu_us", 0.0), (r or {}).get("self_device_us", 0.0)
        count_ok = gc == rc
        bad_counts += not count_ok
        diff = None if rt <= 0 else 100.0 * (gt - rt) / rt
        # A record_function range ("Optimizer.step#Adam.step") gets from torch.profiler the GPU
        # span of its kernels (gpu_user_annotation) as device time; gpuscope charges each kernel
        # to the operator that launched it: only its call count is compared.
        judge = rt > 50.0 and "#" not in n
        time_ok = not judge or (diff is not None and abs(diff) <= 2.0)
        judged += judge
        bad_times += not time_ok
        rows.append({"name": n, "gpuscope_calls": gc, "torch_calls": rc, "gpuscope_self_gpu_us": gt,
                     "torch_self_cuda_us": rt, "diff_pct": diff, "count_ok": count_ok, "time_ok": time_ok})
    md = ["# gpuscope --pytorch=ops vs torch.profiler (CNN example, steps 5-10)", "",
          f"{len(names)} operator names; call counts differ for {bad_counts}; self GPU time judged for {judged} "
          f"names (over 50 µs), off by more than 2 % for {bad_times}.", "",
          "| operator | calls gpuscope | calls torch.profiler | self GPU gpuscope (µs) | self CUDA torch.profiler (µs) "
          "| diff |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        d = "" if r["diff_pct"] is None else f"{r['diff_pct']:+.2f} %"
        flag = "" if r["count_ok"] and r["time_ok"] else " **✗**"
        md.append(f"| `{r['name']}`{flag} | {r['gpuscope_calls']} | {r['torch_calls']} | {r['gpuscope_self_gpu_us']:.1f} "
                  f"| {r['torch_self_cuda_us']:.1f} | {d} |")
    (out / "pytorch_check.md").write_text("\n".join(md) + "\n")
    (out / "pytorch_check.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("\n".join(md[:3]))
    return 0 if bad_counts == 0 and bad_times == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
