#!/usr/bin/env python3
"""gpuscope trace --gpu-metrics against independent references, on the GPU machine.

Workloads (each traced with --gpu-metrics at 10 kHz and --keep-logs):
  copy  gpuscope bench copy --sizes 2^30 (f32, grid_stride_vec4): its own GB/s is the reference
  gemm  gpuscope bench gemm --dtype bf16 --sizes 8192 (cuBLASLt): tensor cores
  fma   kernel_mix --only fma_loop (4224 blocks x 200000 steps): SM active
For each: validation/gpu_metrics_check.py on the sampler's own log (samples inside the
kernel's executions, the clock offset that best fits GR active to "a kernel runs"), and
`gpuscope stats -r gpu_metrics_sum` (the report). Then ncu (a separate process, same
command, --cache-control none --clock-control none) measures dram__bytes_read.sum +
dram__bytes_write.sum per launch of the copy and GEMM kernels: the report's sampled DRAM bytes
per execution must be within 10 % of it.
Writes OUT/gpu_metrics.md and OUT/gpu_metrics.json. Exit 1 when a target is not met.
"""
import argparse
import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "validation"))
import gpu_metrics_check as gmc  # noqa: E402

NCU_DEFAULT = "/opt/nvidia/nsight-compute/2025.3.1/ncu"


def run(cmd, timeout=180):
    cmd = [str(c) for c in cmd]
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        print(r.stdout[-2000:], r.stderr[-3000:])
    return r


def report_rows(gs, db, name):
    r = run([gs, "stats", db, "-r", name, "--format", "json"])
    if r.returncode != 0:
        return [], []
    doc = json.loads(r.stdout)["reports"][name]
    cols = [c["name"] + (f" ({c['unit']})" if c["unit"] else "") for c in doc["columns"]]
    return [dict(zip(cols, row)) for row in doc["rows"]], [n["text"] for n in doc["notes"]]


def ncu_dram(ncu, regex, target, launches=3):
    """Median dram bytes (read + write) per launch of kernels matching regex, from ncu."""
    r = run([ncu, "--metrics", "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum",
             "--cache-control", "none", "--clock-control", "none", "-k", f"regex:{regex}", "--launch-count",
             str(launches), "--csv", "--page", "raw", *target], timeout=300)
    lines = [line for line in r.stdout.splitlines() if line.startswith('"')]
    if len(lines) < 3:
        return None, r.stdout[-500:] + r.stderr[-500:]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    head, units = rows[0], rows[1]
    iread, iwrite = head.index("dram__bytes_read.sum"), head.index("dram__bytes_write.sum")
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}
    vals = []
    for row in rows[2:]:
        v = float(row[iread].replace(",", "")) * scale.get(units[iread], 1) + \
            float(row[iwrite].replace(",", "")) * scale.get(units[iwrite], 1)
        vals.append(v)
    vals.sort()
    return vals[len(vals) // 2], f"{len(vals)} launches, units {units[iread]}/{units[iwrite]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--ncu", default=shutil.which("ncu") or NCU_DEFAULT)
    a = ap.parse_args()
    build, out = Path(a.build).resolve(), Path(a.out).resolve()
    work = out / "gpu_metrics_work"
    work.mkdir(parents=True, exist_ok=True)
    gs = build / "bin" / "gpuscope"
    bench_json = work / "copy-bench.json"
    workloads = {
        "copy": ([gs, "bench", "copy", "--sizes", "2^30", "--variant", "grid_stride_vec4", "--dtype", "f32",
                  "--budget", "1", "--json", bench_json, "-f"], "copy_vec"),
        "gemm": ([gs, "bench", "gemm", "--dtype", "bf16", "--sizes", "8192", "--budget", "1"], "nvjet|gemm"),
        "fma": ([build / "bin" / "kernel_mix", "--only", "fma_loop", "--fma-blocks", "4224", "--fma-iters", "200000",
                 "--repeat", "3"], "fma_loop"),
    }
    results, ok = {}, True
    for name, (target, regex) in workloads.items():
        base = work / name
        r = run([gs, "trace", "--gpu-metrics", "--keep-logs", "-o", base, "-f", "-q", "--calibrate", "never", "--",
                 *target])
        res = {"trace_exit": r.returncode, "stderr_tail": r.stderr[-1500:]}
        if r.returncode != 0:
            ok = False
            results[name] = res
            continue
        db, logs = Path(f"{base}.sqlite"), Path(f"{base}.logs")
        chk = run([sys.executable, REPO / "validation" / "gpu_metrics_check.py", db, logs, "--kernel", regex,
                   "--json", work / f"{name}-check.json"])
        res["check_stdout"] = chk.stdout
        with open(work / f"{name}-check.json", encoding="utf-8") as f:
            res["check"] = json.load(f)
        rows, notes = report_rows(gs, db, "gpu_metrics_sum")
        res["report"] = [row for row in rows if re.search(regex, str(row.get("Name", "")))]
        res["report_notes"] = notes
        if name in ("copy", "gemm") and Path(a.ncu).exists():
            res["ncu_dram_bytes"], res["ncu_detail"] = ncu_dram(a.ncu, regex, target)
        results[name] = res

    def dev0(name):
        devs = results.get(name, {}).get("check", {}).get("devices", {})
        return next(iter(devs.values()), {}) if devs else {}

    def kern(name):
        ks = dev0(name).get("kernels", {})
        return next(iter(ks.values()), {}) if ks else {}

    def rep(name):
        rows = results.get(name, {}).get("report", [])
        return rows[0] if rows else {}

    bench_gbps = None
    if bench_json.exists():
        for case in json.load(open(bench_json)).get("cases", []):
            bw = (case.get("derived") or {}).get("bandwidth")
            if bw:
                bench_gbps = bw / 1e9
    targets = []

    def target(what, value, ref, passed, detail=""):
        nonlocal ok
        ok = ok and bool(passed)
        targets.append((what, value, ref, "met" if passed else "**not met**", detail))

    copy_gbps = kern("copy").get("dram_gbps")
    rep_copy = rep("copy").get("DRAM (GB/s)")
    if copy_gbps and bench_gbps:
        target("sampled DRAM GB/s during bench copy 2^30 (samples inside the kernel)", f"{copy_gbps:.1f} GB/s",
               f"bench {bench_gbps:.1f} GB/s", abs(copy_gbps / bench_gbps - 1) <= 0.05,
               f"{100 * (copy_gbps / bench_gbps - 1):+.2f} %")
    if rep_copy and bench_gbps:
        target("gpu_metrics_sum DRAM GB/s of the copy kernel", f"{rep_copy:.1f} GB/s", f"bench {bench_gbps:.1f} GB/s",
               abs(rep_copy / bench_gbps - 1) <= 0.05, f"{100 * (rep_copy / bench_gbps - 1):+.2f} %")
    tm = kern("gemm").get("means", {}).get("sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed")
    if tm is not None:
        target("tensor active during the bf16 8192^3 GEMM", f"{tm:.1f} %", ">= 80 %", tm >= 80)
    tc = kern("copy").get("means", {}).get("sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed")
    if tc is not None:
        target("tensor active during the copy", f"{tc:.2f} %", "~0 (< 1 %)", tc < 1)
    sm = kern("fma").get("means", {}).get("sm__cycles_active.avg.pct_of_peak_sustained_elapsed")
    if sm is not None:
        target("SM active during the long FMA kernel", f"{sm:.1f} %", ">= 95 %", sm >= 95)
    for name in ("copy", "gemm"):
        got, ref = rep(name).get("DRAM Bytes (bytes)"), results.get(name, {}).get("ncu_dram_bytes")
        if got and ref:
            target(f"gpu_metrics_sum DRAM bytes per execution, {name} kernel", f"{got:.4g} B", f"ncu {ref:.4g} B",
                   abs(got / ref - 1) <= 0.10, f"{100 * (got / ref - 1):+.2f} %")
        else:
            target(f"gpu_metrics_sum DRAM bytes per execution, {name} kernel", str(got), f"ncu {ref}", False,
                   "missing")
    offsets = {n: dev0(n).get("best_offset_ns") for n in workloads}

    lines = ["# gpuscope trace --gpu-metrics against references", "",
             "| target | gpuscope | reference | result | difference |", "|---|---|---|---|---|"]
    lines += [f"| {w} | {v} | {r} | {res} | {d} |" for w, v, r, res, d in targets]
    lines += ["", "Clock: offset (ns) added to the samples that best fits GR active to the traced kernels "
              "(0 = the samples are on the trace clock): " + ", ".join(f"{n} {o}" for n, o in offsets.items()), ""]
    for name in workloads:
        lines += [f"## {name}", "", "```", results.get(name, {}).get("check_stdout", "").strip(), "```", "",
                  f"gpu_metrics_sum: `{rep(name)}`", ""]
        if "ncu_dram_bytes" in results.get(name, {}):
            lines += [f"ncu: {results[name]['ncu_dram_bytes']} B per launch ({results[name].get('ncu_detail')})", ""]
    (out / "gpu_metrics.md").write_text("\n".join(lines) + "\n")
    with open(out / "gpu_metrics.json", "w") as f:
        json.dump({"targets": targets, "results": results}, f, indent=1, default=str)
    for db in work.glob("*.sqlite"):
        db.unlink()
    for d in work.glob("*.logs"):
        shutil.rmtree(d, ignore_errors=True)
    print("\n".join(lines[:len(targets) + 8]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
