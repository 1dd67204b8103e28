#!/usr/bin/env python3
"""GPU test: gpuscope trace --gpu-metrics (GPU hardware counters sampled over time).

Traces three workloads whose counters are known, each with --gpu-metrics (10 kHz, the default):
  copy  `gpuscope bench copy --sizes 2^30` (f32, 4 GiB read + 4 GiB written per call), which
        measures its own GB/s;
  gemm  `gpuscope bench gemm --dtype bf16 --sizes 8192` (cuBLASLt, tensor cores);
  fma   `kernel_mix --only fma_loop` with 4224 blocks x 200000 steps (~60 ms of FFMA only).
Pass when:
  - the launcher sampled the GPU (a gpu_metrics_sessions row, samples every ~100 us, no
    overflow) and said nothing was left out but what the chip lacks;
  - from the gpu_metrics rows themselves (samples entirely inside the kernel's executions):
    DRAM read+write GB/s during the copy kernel within 5 % of the bench's own GB/s; tensor
    active >= 80 % during the GEMM and < 1 % during the copy; SM active >= 95 % during the
    FMA kernel;
  - the gpu_metrics_sum report agrees: its row for each kernel gives the same figures (within
    the same bounds), and its DRAM bytes per execution of the copy and GEMM kernels are within
    10 % of `gpuscope kernels --metrics dram__bytes_read.sum,dram__bytes_write.sum` on the same
    command (the Range Profiler's exact counts, itself checked against ncu: test_kernels);
  - top and gpu_util show the sampled SM active and tensor active columns;
  - the Perfetto export has a counter track per sampled metric.
"""
import json
import re
import sys

import gputest as g

SM_ACTIVE = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
TENSOR = "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"
DRAM = ("dram__bytes_read.sum", "dram__bytes_write.sum")


def rows_of(con, sql, params=()):
    return [tuple(r) for r in con.execute(sql, params).fetchall()]


def report(gpuscope, db, name):
    r = g.run([gpuscope, "stats", db, "-r", name, "--format", "json"])
    if r.returncode != 0:
        return None, []
    doc = json.loads(r.stdout)["reports"][name]
    cols = [c["name"] + (f" ({c['unit']})" if c["unit"] else "") for c in doc["columns"]]
    return [dict(zip(cols, row)) for row in doc["rows"]], doc["notes"]


def inside_means(con, kernel_regex):
    """Per metric name, over the samples lying entirely inside an execution of a kernel whose
    base name matches: time-weighted mean (percent), or bytes per ns (= GB/s) for bytes."""
    kern = [(s, e) for s, e, n in rows_of(con, "SELECT k.start_ns, k.end_ns, s.value FROM kernels k "
                                                     "JOIN strings s ON s.id = k.short_name_id ORDER BY k.start_ns")
            if re.search(kernel_regex, n)]
    if not kern:
        return {}, 0
    rows = rows_of(con, "SELECT m.start_ns, m.end_ns, n.name, m.value FROM gpu_metrics m JOIN gpu_metric_names n "
                             "ON n.id = m.metric_id WHERE m.value IS NOT NULL ORDER BY m.start_ns")
    sums, weights, count = {}, {}, 0
    ki = 0
    for s, e, name, v in rows:
        while ki < len(kern) and kern[ki][1] < e:
            ki += 1
        if ki == len(kern) or not (kern[ki][0] <= s and e <= kern[ki][1]):
            continue
        w = e - s
        if name.endswith(".sum"):
            sums[name] = sums.get(name, 0.0) + v
            weights[name] = weights.get(name, 0) + w
        else:
            sums[name] = sums.get(name, 0.0) + v * w
            weights[name] = weights.get(name, 0) + w
        if name == SM_ACTIVE:
            count += 1
    return {n: sums[n] / weights[n] for n in sums if weights[n] > 0}, count


def kernels_dram_bytes(args, gpuscope, name, regex, target):
    """Median DRAM bytes (read + write) per launch of `regex` from gpuscope kernels."""
    db = args.scratch / f"{name}-kernels.sqlite"
    r = g.run([gpuscope, "kernels", "--metrics", ",".join(DRAM), "-k", regex, "--launch-count", "3",
               "-o", args.scratch / f"{name}-kernels", "-f", "--", *target])
    if r.returncode != 0:
        return None
    con = g.open_db(db)
    per = rows_of(con, "SELECT p.id, SUM(m.value) FROM kernel_metrics m JOIN kernel_profiles p ON p.id = "
                            "m.profile_id JOIN strings s ON s.id = m.metric_id WHERE s.value IN (?, ?) GROUP BY p.id",
                       DRAM)
    vals = sorted(v for _, v in per)
    return vals[len(vals) // 2] if vals else None


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("gpu metrics (PM sampling)")
    gpuscope = g.gpuscope_bin(args.build)
    kernel_mix = g.example_bin(args.build, "kernel_mix")
    bench_json = args.scratch / "copy-bench.json"
    workloads = {
        "copy": ([gpuscope, "bench", "copy", "--sizes", "2^30", "--variant", "grid_stride_vec4", "--dtype", "f32",
                  "--budget", "1", "--json", bench_json, "-f"], "copy_vec"),
        "gemm": ([gpuscope, "bench", "gemm", "--dtype", "bf16", "--sizes", "8192", "--budget", "1"], "nvjet|gemm"),
        "fma": ([kernel_mix, "--only", "fma_loop", "--fma-blocks", "4224", "--fma-iters", "200000", "--repeat", "3"],
                "fma_loop"),
    }
    dbs, means = {}, {}
    for name, (target, regex) in workloads.items():
        r, db = g.trace(args.build, args.scratch, name, target, options=["--gpu-metrics"])
        if "performance counters are restricted" in r.stderr or "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" in r.stderr:
            print("skipped: GPU performance counters are restricted to administrators on this machine")
            sys.exit(g.SKIP)
        c.require(r.returncode == 0, f"gpuscope trace --gpu-metrics -- {name} exits 0", f"exit {r.returncode}")
        c.check("GPU metrics are off" not in r.stderr, f"{name}: the GPU was sampled", g.tail(r.stderr, 5))
        con = g.open_db(db)
        sess = g.query(con, "SELECT * FROM gpu_metrics_sessions")
        c.require(len(sess) >= 1 and sess[0]["samples"] > 0, f"{name}: a sampling session with samples",
                  str(sess))
        s = sess[0]
        c.check(s["interval_ns"] == 100_000, f"{name}: default interval 100 us (10 kHz)", str(s["interval_ns"]))
        lost = g.scalar(con, "SELECT COUNT(*) FROM data_loss WHERE what = 'gpu_metrics_overflow'")
        c.check(lost == 0, f"{name}: no hardware-buffer overflow at 10 kHz", f"{lost} rows")
        span = (s["last_ns"] - s["first_ns"]) / 1e9
        c.check(s["samples"] >= 0.9 * span * 1e9 / s["interval_ns"], f"{name}: no gap in the samples",
                f"{s['samples']} samples over {span:.3f} s")
        means[name], n = inside_means(con, regex)
        print(f"  {name}: {n} samples inside {regex}: " +
              ", ".join(f"{k.split('.')[0]} {v:.3g}" for k, v in sorted(means[name].items())))
        c.require(n >= 5, f"{name}: at least 5 samples lie inside the kernel's executions", str(n))
        dbs[name] = db

    dram = sum(means["copy"].get(m, 0.0) for m in DRAM)  # bytes per ns = GB/s
    with open(bench_json, encoding="utf-8") as f:
        bench_gbps = None
        for case in json.load(f).get("cases", []):
            bw = (case.get("derived") or {}).get("bandwidth")
            if bw:
                bench_gbps = bw / 1e9
    c.require(bench_gbps is not None, "the bench measured its GB/s")
    c.check(abs(dram / bench_gbps - 1) <= 0.05, "sampled DRAM GB/s during the copy within 5 % of the bench's own",
            f"sampled {dram:.1f} GB/s, bench {bench_gbps:.1f} GB/s ({100 * (dram / bench_gbps - 1):+.2f} %)")
    tensor_gemm = means["gemm"].get(TENSOR, 0.0)
    c.check(tensor_gemm >= 80, "tensor active >= 80 % during the bf16 GEMM", f"{tensor_gemm:.1f} %")
    tensor_copy = means["copy"].get(TENSOR, 100.0)
    c.check(tensor_copy < 1, "tensor active ~0 during the copy", f"{tensor_copy:.2f} %")
    sm_fma = means["fma"].get(SM_ACTIVE, 0.0)
    c.check(sm_fma >= 95, "SM active >= 95 % during the long FMA kernel", f"{sm_fma:.1f} %")
    print(f"RESULT copy_sampled_gbps={dram:.2f} copy_bench_gbps={bench_gbps:.2f} gemm_tensor_pct={tensor_gemm:.2f} "
          f"copy_tensor_pct={tensor_copy:.3f} fma_sm_active_pct={sm_fma:.2f}")

    # The report, per kernel name.
    for name, (target, regex) in workloads.items():
        rows, notes = report(gpuscope, dbs[name], "gpu_metrics_sum")
        c.require(rows, f"{name}: gpu_metrics_sum has rows")
        row = next((r for r in rows if re.search(regex, str(r.get("Name", "")))), None)
        c.require(row is not None, f"{name}: gpu_metrics_sum has a row for {regex}", str([r.get("Name") for r in rows]))
        print(f"    {row}")
        if name == "copy":
            gbps = row.get("DRAM (GB/s)")
            c.check(gbps is not None and abs(gbps / bench_gbps - 1) <= 0.05,
                    "report: the copy kernel's DRAM GB/s within 5 % of the bench's", f"{gbps} vs {bench_gbps:.1f}")
        if name == "gemm":
            t = row.get("Tensor Active (%)")
            c.check(t is not None and t >= 80, "report: the GEMM's tensor active >= 80 %", str(t))
        if name == "fma":
            sm = row.get("SM Active (%)")
            c.check(sm is not None and sm >= 95, "report: the FMA kernel's SM active >= 95 %", str(sm))
        if name in ("copy", "gemm"):
            exact = kernels_dram_bytes(args, gpuscope, name, regex, target)
            got = row.get("DRAM Bytes (bytes)")
            c.check(exact and got and abs(got / exact - 1) <= 0.10,
                    f"report: {name} DRAM bytes per execution within 10 % of gpuscope kernels' counters",
                    f"sampled {got} B, gpuscope kernels {exact} B" +
                    (f" ({100 * (got / exact - 1):+.2f} %)" if exact and got else ""))
            print(f"RESULT {name}_dram_bytes_sampled={got} {name}_dram_bytes_counted={exact}")

    for rep in ("top", "gpu_util"):
        rows, notes = report(gpuscope, dbs["gemm"], rep)
        cols = set(rows[0]) if rows else set()
        c.check(any("SM Active" in k for k in cols) and any("Tensor Active" in k for k in cols),
                f"{rep} shows sampled SM active and tensor active", str(sorted(cols)))

    perfetto = args.scratch / "gemm.perfetto.json"
    e = g.run([gpuscope, "export", dbs["gemm"], "--format", "perfetto", "-o", perfetto, "--force-overwrite"])
    c.require(e.returncode == 0, "gpuscope export exits 0")
    with open(perfetto, encoding="utf-8") as f:
        names = {ev["name"] for ev in json.load(f)["traceEvents"] if ev.get("ph") == "C"}
    c.check(any("SM active" in n for n in names) and any("DRAM" in n for n in names),
            "the export has counter tracks of the sampled metrics", str(sorted(names)[:12]))
    c.finish()


if __name__ == "__main__":
    main()
