#!/usr/bin/env python3
"""GPU test: gpuscope kernels' compute-workload and warp-state counters against counts computed
by hand on examples/cuda/kernel_mix (issue 16's GPU test).

kernel_mix --only copy_f4,fma_loop,barrier_wait prints each kernel's hand-computed counts
(EXPECT lines). Pass when:
  1. --metrics sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_lsu.sum (CUPTI kernel
     replay): fma_loop's FMA-pipe warp instructions within 1 % of its FFMA count / 32 (every
     thread of every warp runs the same 8 chains; the few other FMA-pipe instructions, address
     arithmetic, are far under 1 %), and copy_f4's LSU-pipe warp instructions within 1 % of its
     global load + store instructions plus one per warp (one LDG.128 and one STG.128 per warp,
     and one more LSU instruction per warp that every kernel here shows, in the prologue: H100,
     2026-11-27, 3 per warp in copy_f4, 10 in fma_loop = 1 + 8 + 1; copy_f4's SASS opens with
     LDC R1, c[0x0][0x28], S2R and LDC R5, c[0x0][RZ], and which of them issues on the LSU pipe
     was not isolated);
  2. --set compute: fma_loop's explanation names FMA as the busiest pipe;
  3. --set warps -k barrier_wait: barrier is the top stall reason, and its share of all warp
     cycles (smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio over
     smsp__average_warp_latency_per_inst_issued.ratio: both per issued instruction) is the
     hand-computed 7/8 (7 of a block's 8 warps wait at __syncthreads while warp 0 runs a
     dependent FFMA chain of 4096 steps) less what lies outside the chain: within 0.78 .. 0.88;
     all the reasons, "selected" included, add up to smsp__average_warp_latency_per_inst_issued
     within 3 % (they are its parts, as in Nsight Compute's Warp State Statistics);
     the explanation's warp-state sentence starts with barrier;
  4. --cache-control all --set memory (gpuscope's own replay: checkpoint, L2 flush, 4 passes
     launched by gpuscope): exit 0; copy_f4's dram__bytes_read.sum within 1 % of 4 * N (every
     pass starts from an empty L2); the kernel trace holds the program's launches only, once
     each (no gpuscope_l2_flush kernel, no replayed pass);
  5. every run's RESULT line equals the untraced one (each replay restored memory).
"""
import csv
import io

import gputest as g
from test_kernels import kernels, metrics_by_profile, parse_program, profiles, rel, within

PIPE_FMA = "sm__inst_executed_pipe_fma.sum"
PIPE_LSU = "sm__inst_executed_pipe_lsu.sum"
STALL_PREFIX, STALL_SUFFIX = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
BARRIER = STALL_PREFIX + "barrier" + STALL_SUFFIX
PER_ISSUED = "smsp__average_warp_latency_per_inst_issued.ratio"
SHARE_RANGE = (0.78, 0.88)


def by_name(con):
    """{short kernel name: {metric: value}} of the first profiled launch of each kernel."""
    values, out = metrics_by_profile(con), {}
    for r in profiles(con):
        out.setdefault(r["short_name"], values.get(r["id"], {}))
    return out


def report_text(args, db):
    """`gpuscope kernels --report DB --format csv`: {Name: Explanation} of its rows."""
    run = g.run([g.gpuscope_bin(args.build), "kernels", "--report", db, "--format", "csv", "--by", "launch"],
                timeout=120)
    out = {}
    for row in csv.DictReader(io.StringIO(run.stdout)):
        out.setdefault(row.get("Name", ""), row.get("Explanation", ""))
    return run, out


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("gpuscope kernels: compute and warp states against hand counts")
    exe = [g.example_bin(args.build, "kernel_mix"), "--only", "copy_f4,fma_loop,barrier_wait"]

    plain = g.run(exe, timeout=240)
    c.require(plain.returncode == 0, "untraced kernel_mix --only copy_f4,fma_loop,barrier_wait exits 0",
              plain.stderr[-400:])
    expect, _ = parse_program(plain.stdout)
    c.require({"copy_f4", "fma_loop", "barrier_wait"} <= set(expect), "kernel_mix printed the three EXPECT lines",
              str(sorted(expect)))

    # ---- 1. pipe counts -------------------------------------------------------------------
    run, db = kernels(args, "pipes", ["--metrics", f"{PIPE_FMA},{PIPE_LSU}"], exe)
    c.require(run.returncode == 0, "gpuscope kernels --metrics pipe_fma,pipe_lsu exits 0", run.stderr[-400:])
    c.equal("RESULT line identical profiled vs untraced (pipes)", g.result_lines(plain.stdout),
            g.result_lines(run.stdout))
    con = g.open_db(db)
    m = by_name(con)
    fma = m.get("fma_loop", {}).get(PIPE_FMA)
    ffma_warp = expect["fma_loop"]["ffma"] / 32
    c.check(within(fma, ffma_warp, 1.0), "fma_loop: FMA-pipe warp instructions = FFMA / 32 within 1 %",
            f"{fma} vs {ffma_warp:.0f} ({rel(fma, ffma_warp)})")
    lsu = m.get("copy_f4", {}).get(PIPE_LSU)
    warps = expect["copy_f4"]["global_ld_inst"]  # one LDG.128 per warp
    ldst = expect["copy_f4"]["global_ld_inst"] + expect["copy_f4"]["global_st_inst"] + warps
    c.check(within(lsu, ldst, 1.0),
            "copy_f4: LSU-pipe warp instructions = global loads + stores + 1 per warp (prologue) within 1 %",
            f"{lsu} vs {ldst} ({rel(lsu, ldst)})")

    # ---- 2. compute set: the busiest pipe -------------------------------------------------------
    run, db = kernels(args, "compute", ["--set", "compute", "-k", "^fma_loop$"], exe)
    c.require(run.returncode == 0, "gpuscope kernels --set compute -k fma_loop exits 0", run.stderr[-400:])
    c.equal("RESULT line identical profiled vs untraced (compute)", g.result_lines(plain.stdout),
            g.result_lines(run.stdout))
    rep, expl = report_text(args, db)
    c.check(rep.returncode == 0 and "busiest pipe FMA" in expl.get("fma_loop", ""),
            "fma_loop: the compute set's explanation names FMA the busiest pipe", expl.get("fma_loop", "")[:300])

    # ---- 3. warp states: the barrier kernel -------------------------------------------------------
    run, db = kernels(args, "warps", ["--set", "warps", "-k", "^barrier_wait$"], exe)
    c.require(run.returncode == 0, "gpuscope kernels --set warps -k barrier_wait exits 0", run.stderr[-400:])
    c.equal("RESULT line identical profiled vs untraced (warps)", g.result_lines(plain.stdout),
            g.result_lines(run.stdout))
    con = g.open_db(db)
    w = by_name(con).get("barrier_wait", {})
    stalls = {k[len(STALL_PREFIX):-len(STALL_SUFFIX)]: v for k, v in w.items()
              if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX) and v is not None}
    top = max(stalls, key=stalls.get) if stalls else None
    c.check(top == "barrier", "barrier_wait: barrier is the top stall reason",
            ", ".join(f"{k} {v:.2f}" for k, v in sorted(stalls.items(), key=lambda kv: -kv[1])[:4]))
    hand = expect["barrier_wait"]["barrier_share_ppm"] / 1e6
    share = w.get(BARRIER) / w.get(PER_ISSUED) if w.get(BARRIER) is not None and w.get(PER_ISSUED) else None
    c.check(share is not None and SHARE_RANGE[0] <= share <= SHARE_RANGE[1],
            f"barrier_wait: barrier share of warp cycles {SHARE_RANGE[0]}..{SHARE_RANGE[1]} (hand: {hand:.3f} "
            "less the cycles outside the chain)", f"{share}")
    total = sum(stalls.values())  # every state, "selected" (the issue cycle) included
    c.check(w.get(PER_ISSUED) is not None and within(total, w.get(PER_ISSUED), 3.0),
            "barrier_wait: the stall reasons add up to the warp cycles per issued instruction within 3 %",
            f"{total:.2f} vs {w.get(PER_ISSUED)} ({rel(total, w.get(PER_ISSUED))})")
    rep, expl = report_text(args, db)
    text = expl.get("barrier_wait", "")
    states = text[text.find("Warp states:"):] if "Warp states:" in text else ""
    first = states.split(";")[1].strip() if states.count(";") >= 1 else ""
    c.check(rep.returncode == 0 and first.startswith("barrier "),
            "barrier_wait: the explanation's warp states start with barrier", states[:300])
    # ---- 4. --cache-control all: gpuscope's own replay -------------------------------------------
    run, db = kernels(args, "cache_all", ["--set", "memory", "--cache-control", "all"], exe)
    c.require(run.returncode == 0, "gpuscope kernels --set memory --cache-control all exits 0", run.stderr[-400:])
    c.equal("RESULT line identical profiled vs untraced (own replay)", g.result_lines(plain.stdout),
            g.result_lines(run.stdout))
    con = g.open_db(db)
    m = by_name(con)
    read = m.get("copy_f4", {}).get("dram__bytes_read.sum")
    n4 = expect["copy_f4"]["dram_read_bytes"]  # 4 N
    c.check(within(read, n4, 1.0), "copy_f4: DRAM bytes read = 4 N within 1 % (L2 flushed before each pass)",
            f"{read} vs {n4} ({rel(read, n4)})")
    traced = [r["name"] for r in g.query(con, "SELECT name FROM v_kernels ORDER BY start_ns")]
    c.check(not any("gpuscope_l2_flush" in n for n in traced), "no gpuscope_l2_flush kernel in the kernel trace",
            f"{len(traced)} kernels")
    launched = len(profiles(con))
    c.check(len(traced) == launched, "the kernel trace holds each profiled launch once (no replayed pass)",
            f"{len(traced)} kernels traced, {launched} launches profiled: {traced[:12]}")
    return c.finish()


if __name__ == "__main__":
    raise SystemExit(main())
