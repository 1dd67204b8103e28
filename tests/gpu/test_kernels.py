#!/usr/bin/env python3
"""GPU test: `gpuscope kernels` (per-launch hardware counters) on examples/cuda/kernel_mix.

kernel_mix prints what each of its kernels must measure (EXPECT lines, computed by hand) and
the launch index of each of its own launches (LAUNCH lines). Pass when:
  1. --set quick on the whole mix: exit 0, the same RESULT line as untraced; one
     kernel_profiles row per launch (launch_index 0..n-1, each LAUNCH line's index carrying
     its kernel's short name), metric_set 'quick', the six quick metrics on every launch;
     grid/block of copy_f4, the transposes and tiny as launched; copy_f4's
     dram__bytes_read.sum + dram__bytes_write.sum within 2 % of 2 * 4 * N.
  2. --set roofline -k '^(fma_loop|tiny)' (multi-pass kernel replay): only those launches;
     2 * smsp__sass_thread_inst_executed_op_ffma_pred_on.sum of fma_loop within 1 % of its
     FLOPs; RESULT ok=1 (tiny adds 1 to memory per launch: replay restored memory).
  3. -k copy: only launches whose name matches 'copy', and every copy_f4 launch.
  4. --launch-skip 1 --launch-count 2: exactly launch_index 1 and 2, with their names.
     -k transpose --launch-skip 1 --launch-count 1: the second transpose launch (skip and
     count apply to the launches that match the filter, as in ncu).
  5. --metrics with a misspelt name: non-zero exit, the message names dram__bytes_read.sum.
  6. -k matching nothing: exit 0, a warning that lists the kernel names it saw.
  7. --list-metrics dram__bytes (and with --chip GH100): lists dram__bytes_read.
  8. cuBLAS GEMMs (bf16, f16, tf32): the Hopper tensor-op counters of each dtype and
     sm__inst_executed_pipe_tensor.sum are non-zero (FLOP calibration: validation/kernels_check.py).
  9. --replay-mode none on the whole mix (memsets, memcpys, cuBLAS between launches): the
     same launches as kernel replay and, launch by launch, smsp__inst_executed.sum within
     0..16 instructions per warp above kernel replay's (a range given to the wrong launch would
     swap counts between kernels), and no dropped-session warning.
PyTorch and --nvtx-include: test_kernels_torch.py.
"""
import re

import gputest as g

QUICK = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
         "l1tex__t_bytes.sum", "sm__warps_active.avg.pct_of_peak_sustained_active"]
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
TENSOR = {"bf16": "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
          "f16": "sm__ops_path_tensor_op_hgmma_src_fp16.sum",
          "tf32": "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum"}
PIPE_TENSOR = "sm__inst_executed_pipe_tensor.sum"


def parse_program(stdout):
    """EXPECT lines -> {kernel: {key: int or str}}, LAUNCH lines -> {index: kernel}."""
    expect, launches = {}, {}
    for line in stdout.splitlines():
        if line.startswith("EXPECT "):
            fields = g.parse_result(line)
            expect[fields["kernel"]] = {k: int(v) if v.lstrip("-").isdigit() else v for k, v in fields.items()}
        elif line.startswith("LAUNCH "):
            fields = g.parse_result(line)
            launches[int(fields["index"])] = fields["kernel"]
    return expect, launches


def kernels(args, name, options, target, timeout=300):
    """`gpuscope kernels OPTIONS -o SCRATCH/NAME -f -- TARGET`; returns (run, db path)."""
    cmd = [g.gpuscope_bin(args.build), "kernels", *options, "-o", args.scratch / name, "-f", "--", *target]
    return g.run(cmd, timeout=timeout), args.scratch / f"{name}.sqlite"


def profiles(con):
    return g.query(con, "SELECT p.id, p.pid, p.correlation_id, p.launch_index, p.metric_set, p.passes, "
                        "p.grid_x, p.grid_y, p.grid_z, p.block_x, p.block_y, p.block_z, "
                        "n.value AS name, s.value AS short_name FROM kernel_profiles p "
                        "LEFT JOIN strings n ON n.id = p.name_id LEFT JOIN strings s ON s.id = p.short_name_id "
                        "ORDER BY p.pid, p.launch_index")


def metrics_by_profile(con):
    """{profile_id: {metric: value}} from v_kernel_metrics."""
    out = {}
    for r in g.query(con, "SELECT profile_id, metric, value FROM v_kernel_metrics"):
        out.setdefault(r["profile_id"], {})[r["metric"]] = r["value"]
    return out


def within(actual, expected, pct):
    return actual is not None and expected != 0 and abs(actual - expected) / abs(expected) * 100 <= pct


def rel(actual, expected):
    return "n/a" if actual is None or not expected else f"{(actual - expected) / expected * 100:+.3f} %"


def short_names(rows):
    return [r["short_name"] for r in rows]


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("gpuscope kernels")
    exe = g.example_bin(args.build, "kernel_mix")

    # ---- 1. the quick set on the whole mix -------------------------------------------------
    plain = g.run([exe], timeout=240)
    c.require(plain.returncode == 0, "untraced kernel_mix exits 0")
    expect, own = parse_program(plain.stdout)
    c.require(len(own) >= 8 and "copy_f4" in expect, "kernel_mix printed its LAUNCH and EXPECT lines",
              f"{len(own)} launches, kernels {sorted(expect)}")
    run, db = kernels(args, "quick", ["--set", "quick"], [exe])
    c.require(run.returncode == 0, "gpuscope kernels --set quick -- kernel_mix exits 0", f"exit {run.returncode}")
    c.equal("RESULT line identical profiled vs untraced", g.result_lines(plain.stdout), g.result_lines(run.stdout))
    con = g.open_db(db)
    rows = profiles(con)
    g.show(con, "kernel_profiles", "SELECT p.launch_index, s.value AS short_name, p.metric_set, p.passes, p.grid_x, "
                                   "p.block_x, p.block_y FROM kernel_profiles p LEFT JOIN strings s "
                                   "ON s.id = p.short_name_id ORDER BY p.launch_index")
    values = metrics_by_profile(con)
    c.check(len(rows) > len(own), "more profiles than kernel_mix's own launches (the cuBLAS GEMMs' too)",
            f"{len(rows)} profiles, {len(own)} own launches")
    c.equal("launch_index runs 0..n-1 (every launch profiled)", list(range(len(rows))),
            [r["launch_index"] for r in rows])
    by_index = {r["launch_index"]: r for r in rows}
    c.equal("short names at kernel_mix's LAUNCH indices", [own[i] for i in sorted(own)],
            [by_index.get(i, {}).get("short_name") for i in sorted(own)])
    c.check(all(r["metric_set"] == "quick" for r in rows), "metric_set = 'quick' on every row",
            str(sorted({r['metric_set'] for r in rows}, key=str)))
    c.check(all((r["passes"] or 0) >= 1 for r in rows), "passes >= 1 on every row")
    c.check(all(r["correlation_id"] is not None for r in rows), "correlation_id set on every row")
    missing = [(r["launch_index"], m) for r in rows for m in QUICK if values.get(r["id"], {}).get(m) is None]
    c.check(not missing, "the six quick metrics on every profiled launch", f"missing: {missing[:10]}")
    c.check(all((values.get(r["id"], {}).get("gpu__time_duration.sum") or 0) > 0 for r in rows),
            "gpu__time_duration.sum > 0 on every launch")
    first = {}
    for r in rows:
        first.setdefault(r["short_name"], r)
    n = expect["copy_f4"]["n"]
    shapes = {"copy_f4": ((n // 4 + 255) // 256, 1, 1, 256, 1, 1), "tiny": (1, 1, 1, 32, 1, 1),
              "transpose_padded": (expect["transpose_padded"]["n"] // 32, expect["transpose_padded"]["n"] // 32, 1,
                                   32, 32, 1)}
    for name, shape in shapes.items():
        r = first.get(name, {})
        c.equal(f"{name} grid x,y,z / block x,y,z", shape,
                tuple(r.get(k) for k in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")))
    copy = first.get("copy_f4")
    if c.check(copy is not None, "copy_f4 profiled"):
        m = values.get(copy["id"], {})
        read, write = m.get("dram__bytes_read.sum"), m.get("dram__bytes_write.sum")
        want = expect["copy_f4"]["dram_bytes"]
        total = None if read is None or write is None else read + write
        c.check(within(total, want, 2.0), "copy_f4 dram__bytes_read.sum + dram__bytes_write.sum within 2 % of 2*4*N",
                f"read {read}, write {write}, sum {total} vs {want}: {rel(total, want)}")
    if g.scalar(con, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'data_loss'"):
        g.data_summary(con)
        c.equal("data_loss rows with severity data_loss", 0,
                g.scalar(con, "SELECT COUNT(*) FROM data_loss WHERE severity = 'data_loss'"))
    con.close()

    # ---- 2. roofline set, kernel replay over several passes ----------------------------------
    target = [exe, "--only", "fma_loop,dfma_loop,hfma2_loop,tiny", "--repeat", "2"]
    plain = g.run(target)
    expect_fma, own_fma = parse_program(plain.stdout)
    run, db = kernels(args, "roofline", ["--set", "roofline", "-k", "^(fma_loop|tiny)"], target)
    c.require(run.returncode == 0, "gpuscope kernels --set roofline -k '^(fma_loop|tiny)' exits 0", f"exit {run.returncode}")
    c.equal("RESULT line identical profiled vs untraced (ok=1: replay restored tiny's counters)",
            g.result_lines(plain.stdout), g.result_lines(run.stdout))
    con = g.open_db(db)
    rows = profiles(con)
    values = metrics_by_profile(con)
    wanted = sorted(i for i, k in own_fma.items() if k in ("fma_loop", "tiny"))
    c.equal("launches profiled = the fma_loop and tiny launches", wanted, [r["launch_index"] for r in rows])
    print(f"  passes per launch: {[(r['short_name'], r['passes']) for r in rows]}")
    if not any((r["passes"] or 0) > 1 for r in rows):
        print("  note: the roofline set took one pass here, so the replay check restored nothing")
    flops = expect_fma["fma_loop"]["flops"]
    for r in rows:
        if r["short_name"] != "fma_loop":
            continue
        ffma = values.get(r["id"], {}).get(FFMA)
        got = None if ffma is None else 2 * ffma
        c.check(within(got, flops, 1.0), f"fma_loop launch {r['launch_index']}: 2 x {FFMA} within 1 % of FLOPs",
                f"2 x {ffma} = {got} vs {flops}: {rel(got, flops)}")
    con.close()

    # ---- 3. -k copy ------------------------------------------------------------------------
    target = [exe, "--only", "own", "--repeat", "2"]
    plain = g.run(target)
    _, own2 = parse_program(plain.stdout)
    run, db = kernels(args, "filter_copy", ["--set", "quick", "-k", "copy"], target)
    c.require(run.returncode == 0, "gpuscope kernels -k copy exits 0", f"exit {run.returncode}")
    con = g.open_db(db)
    rows = profiles(con)
    c.check(rows and all(re.search("copy", r["name"] or "") or re.search("copy", r["short_name"] or "") for r in rows),
            "-k copy: every profiled launch's name matches 'copy'", str(short_names(rows)))
    c.equal("-k copy: launch indices = the copy_f4 launches", sorted(i for i, k in own2.items() if k == "copy_f4"),
            [r["launch_index"] for r in rows])
    con.close()

    # ---- 4. --launch-skip / --launch-count ----------------------------------------------------
    target = [exe, "--only", "own"]
    plain = g.run(target)
    _, own1 = parse_program(plain.stdout)
    run, db = kernels(args, "skip_count", ["--set", "quick", "--launch-skip", "1", "--launch-count", "2"], target)
    c.require(run.returncode == 0, "gpuscope kernels --launch-skip 1 --launch-count 2 exits 0", f"exit {run.returncode}")
    con = g.open_db(db)
    rows = profiles(con)
    c.equal("--launch-skip 1 --launch-count 2: launch_index", [1, 2], [r["launch_index"] for r in rows])
    c.equal("--launch-skip 1 --launch-count 2: names", [own1.get(1), own1.get(2)], short_names(rows))
    con.close()
    run, db = kernels(args, "skip_filtered",
                      ["--set", "quick", "-k", "transpose", "--launch-skip", "1", "--launch-count", "1"], target)
    c.require(run.returncode == 0, "gpuscope kernels -k transpose --launch-skip 1 --launch-count 1 exits 0",
              f"exit {run.returncode}")
    con = g.open_db(db)
    rows = profiles(con)
    transposes = sorted(i for i, k in own1.items() if k.startswith("transpose"))
    c.equal("-k transpose --launch-skip 1 --launch-count 1: the second transpose launch (skip counts matches)",
            [(transposes[1], own1[transposes[1]])] if len(transposes) > 1 else [],
            [(r["launch_index"], r["short_name"]) for r in rows])
    con.close()

    # ---- 5. unknown metric -----------------------------------------------------------------
    run, _ = kernels(args, "bad_metric", ["--metrics", "dram__bytes_reed.sum"], [exe, "--only", "tiny"], timeout=120)
    text = run.stdout + run.stderr
    c.check(run.returncode != 0, "--metrics dram__bytes_reed.sum exits non-zero", f"exit {run.returncode}")
    c.check("dram__bytes_read" in text, "the message names the close valid metric dram__bytes_read",
            text.strip()[-300:])

    # ---- 6. a filter that matches nothing ----------------------------------------------------
    run, db = kernels(args, "no_match", ["--set", "quick", "-k", "no_such_kernel_xyz"], target)
    text = run.stdout + run.stderr
    c.equal("-k matching nothing exits 0", 0, run.returncode)
    c.check(re.search("warn", text, re.IGNORECASE) is not None, "it prints a warning", text.strip()[-300:])
    c.check(all(name in text for name in ("copy_f4", "tiny")), "the warning lists kernel names seen (copy_f4, tiny)")
    if db.exists():
        con = g.open_db(db)
        c.equal("no kernel_profiles rows", 0, g.scalar(con, "SELECT COUNT(*) FROM kernel_profiles"))
        con.close()

    # ---- 7. --list-metrics --------------------------------------------------------------------
    gs = g.gpuscope_bin(args.build)
    for extra in ([], ["--chip", "GH100"]):
        run = g.run([gs, "kernels", "--list-metrics", "dram__bytes", *extra], timeout=120)
        c.check(run.returncode == 0 and "dram__bytes_read" in run.stdout,
                f"gpuscope kernels --list-metrics {' '.join(['dram__bytes', *extra])} lists dram__bytes_read",
                f"exit {run.returncode}")

    # ---- 8. cuBLAS GEMMs: tensor counters ----------------------------------------------------
    target = [exe, "--only", "gemm"]
    run, db = kernels(args, "gemm", ["--metrics", ",".join([*TENSOR.values(), PIPE_TENSOR])], target)
    c.require(run.returncode == 0, "gpuscope kernels --metrics <tensor counters> -- kernel_mix --only gemm exits 0",
              f"exit {run.returncode}")
    c.check(any(f.get("ok") == "1" for f in map(g.parse_result, g.result_lines(run.stdout))),
            "kernel_mix's GEMM self-check passes under profiling")
    con = g.open_db(db)
    g.show(con, "GEMM launches", "SELECT launch_index, short_name, metric, value FROM v_kernel_metrics "
                                 "ORDER BY launch_index, metric", limit=40)
    sums = {r["metric"]: r["total"] for r in
            g.query(con, "SELECT metric, SUM(value) AS total FROM v_kernel_metrics GROUP BY metric")}
    for dtype, metric in TENSOR.items():
        c.check((sums.get(metric) or 0) > 0, f"gemm_{dtype}: {metric} > 0", f"sum {sums.get(metric)}")
    c.check((sums.get(PIPE_TENSOR) or 0) > 0, f"{PIPE_TENSOR} > 0", f"sum {sums.get(PIPE_TENSOR)}")
    con.close()

    # ---- 9. --replay-mode none: sessions of many launches --------------------------------------
    # Memsets, memcpys and cuBLAS calls sit between kernel_mix's launches; each ends a session.
    # A range given to the wrong launch would swap counts between kernels (fma_loop's and
    # dfma_loop's differ 2x). Replay none counts CUPTI's range triggers too: at most 16
    # instructions per warp (about 8 measured) above kernel replay's exact count.
    inst = "smsp__inst_executed.sum"
    per_mode = {}
    for mode in ("kernel", "none"):
        run, db = kernels(args, f"replay_{mode}", ["--metrics", f"{inst},dram__bytes_read.sum", "--replay-mode", mode],
                          [exe])
        c.require(run.returncode == 0, f"gpuscope kernels --replay-mode {mode} exits 0",
                  f"exit {run.returncode}\n{g.tail(run.stderr)}")
        c.check("not recorded" not in run.stderr, f"replay {mode}: no session dropped (ranges line up with launches)",
                g.tail(run.stderr, 5))
        con = g.open_db(db)
        values = metrics_by_profile(con)
        per_mode[mode] = [(r["launch_index"], r["short_name"], values.get(r["id"], {}).get(inst),
                           r["grid_x"] * r["grid_y"] * r["grid_z"] * -(-(r["block_x"] * r["block_y"] * r["block_z"]) // 32))
                          for r in profiles(con)]
        con.close()
    a, b = per_mode["kernel"], per_mode["none"]
    c.check([x[:2] for x in a] == [x[:2] for x in b] and len(a) > len(own),
            "the same launches in both replay modes (kernel_mix's own and cuBLAS's)",
            f"{len(a)} vs {len(b)} (kernel_mix's own: {len(own)})")
    bad = [(k[:3], n[2], k[3]) for k, n in zip(a, b)
           if k[2] is None or n[2] is None or not 0 <= n[2] - k[2] <= 16 * k[3] + 64]
    c.check(not bad, f"{inst}: replay none = kernel replay + 0..16 per warp, launch by launch",
            f"(launch, name, kernel replay), none, warps: {bad[:4]}")
    extra = sorted({round((n[2] - k[2]) / k[3], 1) for k, n in zip(a, b) if k[2] and n[2] and k[3] > 1000})
    print(f"  replay none adds per warp (grids over 1000 warps): {extra}")
    c.finish()


if __name__ == "__main__":
    main()
