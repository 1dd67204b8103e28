#!/usr/bin/env python3
"""Speed of `gpuscope stats` on a large synthetic trace, side by side with the sqlite3 shell.

Builds a trace database with the schema `gpuscope schema --sql` prints (the importer's
own) holding --launches kernel launches: one cudaLaunchKernel API record and one kernel
record per launch (so 2 x --launches kernel + API events; default 500,000 -> 1,000,000),
joined by correlation id, on 4 streams of one GPU, 40 kernel names, an NVTX 'step' range
every 100 launches on the launching thread, a cudaStreamSynchronize + sync record after
every range and a memcpy every 1,000 launches. Times are made up but consistent (each
launch call lasts 3-8 us, each kernel starts after its launch call and after the previous
kernel on its stream).

Then times, --rounds times each, alternating (median reported):
  all      gpuscope stats -r <every report> --format csv   (the whole stats job)
  each     every report on its own (its share of the total)
  sqlite3  the sqlite3 shell computing cuda_gpu_kern_sum's and cuda_api_sum's aggregates
           (COUNT, SUM, AVG, MIN, MAX per name) on the same file: the floor any SQL
           front end pays for the same GROUP BY
and checks that gpuscope's cuda_gpu_kern_sum totals equal the sqlite3 shell's.
Writes OUT.md and OUT.json. Usage: stats_speed.py --gpuscope build/bin/gpuscope --out OUT
"""
import argparse
import csv
import io
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPORTS = ["top", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
           "nvtx_sum", "nvtx_gpu_proj_sum", "gpu_util", "launch_overhead", "sync_wait", "memcpy_check",
           "cuda_gpu_sum"]
SQL_KERN = ("SELECT s.value, COUNT(*), SUM(k.end_ns - k.start_ns), AVG(k.end_ns - k.start_ns), "
            "MIN(k.end_ns - k.start_ns), MAX(k.end_ns - k.start_ns) FROM kernels k "
            "JOIN strings s ON s.id = k.name_id GROUP BY k.name_id ORDER BY 3 DESC;")
SQL_API = ("SELECT s.value, COUNT(*), SUM(a.end_ns - a.start_ns), AVG(a.end_ns - a.start_ns), "
           "MIN(a.end_ns - a.start_ns), MAX(a.end_ns - a.start_ns) FROM api_calls a "
           "JOIN strings s ON s.id = a.name_id GROUP BY a.name_id ORDER BY 3 DESC;")


def build_trace(path, gpuscope, launches, seed=1):
    schema = subprocess.run([gpuscope, "schema", "--sql"], check=True, capture_output=True, text=True).stdout
    db = sqlite3.connect(path)
    db.executescript(schema)
    rng = random.Random(seed)
    pid, tid, t0 = 4242, 4242, 1_800_000_000_000_000_000
    meta = {"schema_version": "1", "gpuscope_version": "0.1.0", "command": "synthetic (validation/stats_speed.py)",
            "host": "synthetic", "capture_range": "none", "trace_sources": "cuda,nvtx",
            "clock": "CLOCK_REALTIME ns, CUPTI", "process_count": "1", "launched_pid": str(pid)}
    strings = {}

    def sid(text):
        if text not in strings:
            strings[text] = len(strings) + 1
        return strings[text]

    names = [f"void synthetic_kernel_{i}<float, {32 * (i % 8 + 1)}>(float const*, float*, int)" for i in range(40)]
    durations = [rng.uniform(2_000, 60_000) for _ in names]
    api, kern, nvtx, syncs, memcpys = [], [], [], [], []
    cpu = t0
    stream_free = [t0] * 4
    range_start = cpu
    corr = 0
    for i in range(launches):
        corr += 1
        a_start = cpu
        a_end = a_start + rng.randint(3_000, 8_000)
        api.append((pid, tid, "runtime", 211, sid("cudaLaunchKernel"), a_start, a_end, corr, 0))
        s = i % 4
        k = rng.randrange(len(names))
        k_start = max(a_end + rng.randint(500, 3_000), stream_free[s])
        k_end = k_start + int(durations[k] * rng.uniform(0.9, 1.1))
        stream_free[s] = k_end
        grid = 1 + (k * 37) % 2000
        kern.append((pid, 0, 1, 7 + s, corr, k_start, k_end, sid(names[k]), grid, 1, 1, 128 + 32 * (k % 8), 1, 1,
                     32 + k % 64, 0, 1024 * (k % 4), 0))
        cpu = a_end + rng.randint(200, 2_000)
        if i % 1000 == 999:
            corr += 1
            m_api_end = cpu + 20_000
            api.append((pid, tid, "runtime", 51, sid("cudaMemcpyAsync"), cpu, m_api_end, corr, 0))
            m_start = max(m_api_end, stream_free[0])
            memcpys.append((pid, 0, 1, 7, corr, m_start, m_start + 10_000, 1 << 20, "HtoD", "pageable", "device", 1))
            stream_free[0] = m_start + 10_000
            cpu = m_api_end + 1_000
        if i % 100 == 99:
            corr += 1
            sync_end = max(cpu + 2_000, max(stream_free))
            api.append((pid, tid, "runtime", 131, sid("cudaStreamSynchronize"), cpu, sync_end, corr, 0))
            syncs.append((pid, tid, 1, 7, None, "stream_synchronize", cpu + 500, sync_end - 500, corr))
            cpu = sync_end + 1_000
            nvtx.append((pid, tid, tid, None, "PushPop", sid(f"step {i // 100}"), range_start, cpu, 1, None))
            range_start = cpu
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    db.execute("INSERT INTO meta VALUES ('duration_ns', ?)", (str(cpu - t0),))
    db.execute("INSERT INTO processes (pid, ppid, host, cmdline, exe, start_ns, end_ns, ended_cleanly, exit_status) "
               "VALUES (?, 1, 'synthetic', 'synthetic', 'synthetic', ?, ?, 1, 0)", (pid, t0, cpu))
    db.execute("INSERT INTO threads VALUES (?, ?, 'main')", (pid, tid))
    db.execute("INSERT INTO devices (pid, device_id, name, uuid, cc_major, cc_minor, sm_count, global_memory_bytes, "
               "l2_cache_bytes, max_threads_per_block, max_warps_per_sm, max_blocks_per_sm, max_registers_per_sm, "
               "max_registers_per_block, max_shared_memory_per_sm, max_shared_memory_per_block) VALUES "
               "(?, 0, 'NVIDIA H200 (synthetic)', 'GPU-synthetic', 9, 0, 132, 150000000000, 52428800, 1024, 64, "
               "32, 65536, 65536, 233472, 232448)", (pid,))
    db.execute("INSERT INTO capture_windows VALUES (?, ?, ?, 'whole run')", (pid, t0, cpu))
    db.executemany("INSERT INTO strings (id, value) VALUES (?, ?)", [(v, k) for k, v in strings.items()])
    db.executemany("INSERT INTO api_calls (pid, tid, domain, cbid, name_id, start_ns, end_ns, correlation_id, "
                   "return_value) VALUES (?,?,?,?,?,?,?,?,?)", api)
    db.executemany("INSERT INTO kernels (pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns, "
                   "name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, "
                   "static_shared_memory, dynamic_shared_memory, launch_type) VALUES "
                   "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", kern)
    db.executemany("INSERT INTO nvtx_events (pid, tid, end_tid, domain_id, style, text_id, start_ns, end_ns, depth, "
                   "parent_id) VALUES (?,?,?,?,?,?,?,?,?,?)", nvtx)
    db.executemany("INSERT INTO syncs (pid, tid, context_id, stream_id, event_id, sync_type, start_ns, end_ns, "
                   "correlation_id) VALUES (?,?,?,?,?,?,?,?,?)", syncs)
    db.executemany("INSERT INTO memcpys (pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns, "
                   "bytes, copy_kind, src_kind, dst_kind, is_async) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", memcpys)
    db.commit()
    db.close()
    return {"kernels": len(kern), "api_calls": len(api), "nvtx_ranges": len(nvtx), "memcpys": len(memcpys)}


def timed(cmd, stdin=None):
    t = time.perf_counter()
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[:500]}")
    return elapsed, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuscope", default=str(Path(__file__).resolve().parents[1] / "build/bin/gpuscope"))
    ap.add_argument("--sqlite3", default="sqlite3")
    ap.add_argument("--launches", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="stats_speed")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "synthetic.sqlite")
        t = time.perf_counter()
        counts = build_trace(db, args.gpuscope, args.launches)
        build_s = time.perf_counter() - t
        size_mb = os.path.getsize(db) / 1e6
        print(f"stats_speed: synthetic trace: {counts} ({size_mb:.0f} MB, built in {build_s:.1f} s)", flush=True)
        gs = [args.gpuscope, "stats", db, "--format", "csv"]
        variants = {"all": gs + ["-r", ",".join(REPORTS)],
                    "sqlite3": [args.sqlite3, "-csv", db]}
        variants.update({r: gs + ["-r", r] for r in REPORTS})
        samples = {k: [] for k in variants}
        out_all = out_sql = ""
        for rnd in range(args.rounds):
            for name, cmd in variants.items():
                s, out = timed(cmd, SQL_KERN + SQL_API if name == "sqlite3" else None)
                samples[name].append(s)
                if name == "all":
                    out_all = out
                elif name == "sqlite3":
                    out_sql = out
            print(f"stats_speed: round {rnd + 1}/{args.rounds}: all reports {samples['all'][-1]:.2f} s, "
                  f"sqlite3 shell {samples['sqlite3'][-1]:.2f} s", flush=True)

    # The same numbers: kernel totals per name from gpuscope's cuda_gpu_kern_sum vs the shell.
    shell = {row[0]: (int(row[1]), int(row[2])) for row in csv.reader(io.StringIO(out_sql)) if len(row) == 6}
    gs_k = {}
    for block in out_all.strip().split("\n\n"):
        rows = list(csv.reader(io.StringIO(block)))
        if rows and rows[0][:5] == ["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)"]:
            gs_k = {r[-1]: (int(r[2]), int(r[1])) for r in rows[1:]}
            break
    kern_names = {k: v for k, v in shell.items() if k.startswith("void synthetic_kernel")}
    agree = gs_k == kern_names
    med = {k: statistics.median(v) for k, v in samples.items()}
    result = {"counts": counts, "db_mb": size_mb, "rounds": args.rounds, "median_s": med,
              "samples_s": samples, "kern_sum_equals_sqlite3": agree, "cpus": os.cpu_count()}
    Path(args.out + ".json").write_text(json.dumps(result, indent=1))
    total_events = counts["kernels"] + counts["api_calls"]
    lines = [f"# gpuscope stats on {total_events:,} kernel + API events", "",
             f"Synthetic trace (validation/stats_speed.py): {counts['kernels']:,} kernels, {counts['api_calls']:,} API "
             f"calls, {counts['nvtx_ranges']:,} NVTX ranges, {counts['memcpys']:,} memcpys; {size_mb:.0f} MB. "
             f"{os.cpu_count()} CPUs; median of {args.rounds} alternating rounds.", "",
             "| what | median (s) |", "|---|---:|",
             f"| gpuscope stats, all {len(REPORTS)} reports in one call | {med['all']:.2f} |",
             f"| sqlite3 shell: cuda_gpu_kern_sum + cuda_api_sum aggregates (COUNT/SUM/AVG/MIN/MAX) | "
             f"{med['sqlite3']:.2f} |"]
    lines += [f"| gpuscope stats -r {r} | {med[r]:.2f} |" for r in REPORTS]
    lines += ["", f"cuda_gpu_kern_sum instances and totals equal the sqlite3 shell's: {'yes' if agree else 'NO'}"]
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
