#!/usr/bin/env python3
"""The `kernels` step of scripts/gpu-run: `gpuscope kernels` side by side with Nsight Compute
(ncu) on the same programs and launches, written to OUT/kernels_compare.md and .json.

  1. counters, gpuscope vs ncu. Each case runs the same program twice per round, once under
     `gpuscope kernels --metrics LIST` and once under `ncu --metrics LIST` (separate processes,
     alternating: one CUPTI profiler per process), for --rounds rounds (default 3; the medians
     are compared, each side's spread over the rounds counts as noise). Launches are matched
     by kernel base name and order.
       kernel_mix --only own          groups hw, sass      (every hand-written kernel)
       kernel_mix --only transposes   group shared         (bank-conflict wavefronts)
       kernel_mix --only gemm         group tensor         (cuBLAS bf16/f16/tf32 4096^3)
       gpuscope bench copy 2^24       group hw             (-k copy_vec, 5 launches)
       gpuscope bench transpose 2^12  groups hw, shared    (-k transpose_shared, 3 launches)
     targets: byte and instruction counts within 1 %, durations and percentages within 3 %
     (or within the absolute floors of TARGETS below, for kernels of a few microseconds, or
     within the two tools' own round-to-round spread: such passes are counted apart).
  2. hand-computed counts (kernel_mix's EXPECT lines) vs gpuscope's values: copy_f4 DRAM
     read + write within 2 % of 2 * 4 * N; 2 * FFMA / 2 * DFMA = FLOPs, HFMA2 count, global and
     shared load/store instructions, and the bank-conflicted transpose's extra shared-load
     wavefronts (31 per warp load) within 1 % (ncu's value beside).
  3. speed: `kernel_mix --launches 200` end to end (wall clock): untraced, under
     `gpuscope kernels --set quick`, under `ncu --metrics <the quick set>`;
     target: ncu / gpuscope >= 10 (--speed-target).
  4. FLOP calibration: the Hopper tensor-op counters (sm__ops_path_tensor_op_hgmma_src_*)
     summed over the launches of cuBLAS GEMMs of known 2 M N K, at two shapes; factor =
     counter / (2 M N K) per counter; target: the two shapes' factors agree within 1 %.

ncu runs with --clock-control none (gpuscope never locks clocks) and --cache-control none
(gpuscope's kernel replay does not flush caches between launches or passes): both tools
then see the same cache and clock state; the report says so.
Exit status: 0 when every command ran and every target was met, 1 otherwise (everything is
still written). Usage:
  kernels_check.py --build BUILD --out OUT [--rounds N] [--ncu PATH] [--timeout S]
The pure functions (ncu CSV parsing, name normalisation, matching, judging, tables) are
unit-tested without a GPU by tests/unit/validation/test_kernels_check.py.
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

QUICK = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
         "l1tex__t_bytes.sum", "sm__warps_active.avg.pct_of_peak_sustained_active"]
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
DFMA = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"
HFMA = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
TENSOR = {"bf16": "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
          "f16": "sm__ops_path_tensor_op_hgmma_src_fp16.sum",
          "tf32": "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum"}
PIPE_TENSOR = "sm__inst_executed_pipe_tensor.sum"
# Metric groups, each one replay pass on GH100 (cuptiProfilerHostGetNumOfPasses), so neither
# tool replays a kernel and no memory save/restore sits between the two tools' launches.
GROUPS = {
    "hw": QUICK + ["sm__inst_executed.sum"],
    "sass": [FFMA, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
             "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", DFMA, HFMA,
             "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
             "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum"],
    "shared": ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
               "smsp__inst_executed.sum", "gpu__time_duration.sum"],
    "tensor": list(TENSOR.values()) + [PIPE_TENSOR, "gpu__time_duration.sum"],
    # The sol, memory and occupancy sets of `gpuscope kernels` (may take more than one pass:
    # then both tools replay each kernel).
    "sol": ["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
            "l1tex__throughput.avg.pct_of_peak_sustained_elapsed"],
    "memory": ["l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct",
               "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
               "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"],
    "occupancy": ["sm__warps_active.avg.pct_of_peak_sustained_active", "sm__warps_active.avg.per_cycle_active",
                  "smsp__warps_eligible.avg.per_cycle_active"],
}
# kind -> (relative target in %, absolute floor): a pair passes when |gpuscope - ncu| <=
# max(relative * |ncu|, floor, noise), noise = the spread (max - min) of gpuscope's rounds plus
# that of ncu's rounds for that launch and metric: the two tools cannot agree better than each
# agrees with itself. Floors: DRAM/L2 bytes of small kernels depend on the dirty L2 lines
# earlier kernels left (1 MiB); durations of 2-5 us kernels move by ~0.1 us run to run
# (0.2 us); percentages of nearly idle GPUs (0.5 percentage points); shared-memory bank
# conflicts, of which H100 counts ~20-40k even for a conflict-free transpose (±1k run to run,
# ncu against itself); per-cycle averages (warps per cycle) as percentages, floor 0.1 warp.
# Instruction and other counts have no floor.
TARGETS = {"bytes": (1.0, float(1 << 20)), "count": (1.0, 0.0), "duration": (3.0, 200.0), "percent": (3.0, 0.5),
           "conflicts": (1.0, 5000.0), "average": (3.0, 0.1)}
FLOOR_TEXT = {"bytes": "1 MiB", "count": "none", "duration": "0.2 us", "percent": "0.5 points",
              "conflicts": "5,000", "average": "0.1"}
GEMM_SHAPES = ["4096x4096x4096", "2048x6144x8192"]


# ---- pure functions (unit-tested) -----------------------------------------------------------

# Both tools run with the same cache control (--cache-control): "none" (gpuscope's default)
# leaves caches as the program and the replay's restore had them, "all" (ncu's default)
# flushes them before every replay pass.
CACHE_CONTROL = "none"


def metric_kind(metric):
    """'duration', 'percent', 'average' (per cycle, or a .ratio: the stall reasons' cycles per
    issued instruction, a rate like the others), 'conflicts', 'bytes' or 'count' (instructions,
    wavefronts, sectors, requests, ops, ...)."""
    if "time_duration" in metric:
        return "duration"
    if "per_cycle" in metric or metric.endswith(".ratio"):
        return "average"
    if "bank_conflicts" in metric:
        return "conflicts"
    if "pct" in metric:
        return "percent"
    if "bytes" in metric:
        return "bytes"
    return "count"


def parse_number(text):
    """ncu's '1,073,781,248' / '78.69' / 'n/a' -> float or None."""
    text = (text or "").strip().replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def normalize_name(name):
    """A kernel's base name: no parameters, template arguments, return type or namespace.

    'void ns::(anonymous namespace)::k<float, 4>(const float *, int)' -> 'k'; ncu's
    'unnamed>::copy_vec(...)' -> 'copy_vec'; 'nvjet_sm90_tss_...' stays as it is."""
    s = (name or "").strip()
    s = s.replace("(anonymous namespace)", "anon").replace("<unnamed>", "anon").replace("unnamed>", "anon")
    # Drop the parameter list: the last top-level '(...)' at the end.
    if s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += s[i] == ")"
            depth -= s[i] == "("
            if depth == 0:
                s = s[:i]
                break
    # Drop template arguments (nested).
    out, depth = [], 0
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    s = "".join(out).strip()
    s = s.split("::")[-1]
    return s.split()[-1] if s.split() else s


def parse_ncu_csv(text):
    """ncu --csv --print-units base output (program output mixed in) -> launches in ID order:
    [{'id': int, 'name': base name, 'full_name': str, 'metrics': {metric: float or None},
      'units': {metric: str}}]."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID",')), None)
    if start is None:
        return []
    body = [lines[start]] + [l for l in lines[start + 1:] if l.startswith('"')]
    launches = {}
    for row in csv.DictReader(io.StringIO("\n".join(body))):
        try:
            key = int(row["ID"])
        except (KeyError, ValueError):
            continue
        entry = launches.setdefault(key, {"id": key, "name": normalize_name(row.get("Kernel Name")),
                                          "full_name": row.get("Kernel Name"), "metrics": {}, "units": {}})
        metric = row.get("Metric Name")
        if metric:
            entry["metrics"][metric] = parse_number(row.get("Metric Value"))
            entry["units"][metric] = (row.get("Metric Unit") or "").strip()
    return [launches[k] for k in sorted(launches)]


def match_launches(gs, ncu):
    """Pairs launches by base name and order of occurrence.

    gs, ncu: lists of {'name': ..., 'metrics': {...}} in launch order. Returns (pairs,
    only_gs, only_ncu): pairs = [(label, gs_launch, ncu_launch)], label 'name#k' (k-th launch
    of that name, from 0); the others list labels found on one side only."""
    def labelled(launches):
        seen, out = {}, []
        for launch in launches:
            k = seen.get(launch["name"], 0)
            seen[launch["name"]] = k + 1
            out.append((f"{launch['name']}#{k}", launch))
        return out
    a, b = labelled(gs), dict(labelled(ncu))
    pairs = [(label, launch, b[label]) for label, launch in a if label in b]
    only_gs = [label for label, _ in a if label not in b]
    a_labels = {label for label, _ in a}
    only_ncu = [label for label, _ in labelled(ncu) if label not in a_labels]
    return pairs, only_gs, only_ncu


def judge(metric, gs_value, ncu_value, noise=0.0):
    """{'kind', 'diff_pct', 'tolerance', 'noise', 'basis', 'result'}: result 'PASS', 'FAIL' or
    'MISSING'; basis 'noise' when the pair passes only because of the tools' own spread."""
    kind = metric_kind(metric)
    rel_pct, floor = TARGETS[kind]
    out = {"kind": kind, "diff_pct": None, "tolerance": None, "noise": noise, "basis": "target", "result": "MISSING"}
    if gs_value is None or ncu_value is None:
        return out
    diff = gs_value - ncu_value
    out["diff_pct"] = diff / abs(ncu_value) * 100 if ncu_value else (0.0 if diff == 0 else float("inf"))
    target = max(rel_pct / 100 * abs(ncu_value), floor)
    out["tolerance"] = max(target, noise or 0.0)
    out["result"] = "PASS" if abs(diff) <= out["tolerance"] else "FAIL"
    if out["result"] == "PASS" and abs(diff) > target:
        out["basis"] = "noise"
    return out


def median_metrics(rounds):
    """[{'metric': value}, ...] of one launch over rounds -> {metric: median of non-None}."""
    keys = sorted({k for r in rounds for k in r})
    out = {}
    for k in keys:
        vals = [r[k] for r in rounds if r.get(k) is not None]
        out[k] = statistics.median(vals) if vals else None
    return out


def combine_rounds(per_round):
    """Launch lists of several rounds -> one list with per-metric medians ('metrics') and
    spreads (max - min, 'spread'), matched by label within the side (a launch missing in a
    round just contributes nothing)."""
    if not per_round:
        return []
    base = per_round[0]
    labelled = []
    for launches in per_round:
        seen, d = {}, {}
        for launch in launches:
            k = seen.get(launch["name"], 0)
            seen[launch["name"]] = k + 1
            d[f"{launch['name']}#{k}"] = launch
        labelled.append(d)
    out, seen = [], {}
    for launch in base:
        k = seen.get(launch["name"], 0)
        seen[launch["name"]] = k + 1
        label = f"{launch['name']}#{k}"
        merged = dict(launch)
        rounds = [d[label]["metrics"] for d in labelled if label in d]
        merged["metrics"] = median_metrics(rounds)
        merged["spread"] = {}
        for m in merged["metrics"]:
            vals = [r[m] for r in rounds if r.get(m) is not None]
            merged["spread"][m] = max(vals) - min(vals) if vals else 0.0
        merged["rounds"] = sum(label in d for d in labelled)
        out.append(merged)
    return out


def parse_expect(stdout):
    """kernel_mix's 'EXPECT kernel=NAME k=v ...' lines -> {NAME: {k: int or str}}."""
    out = {}
    for line in stdout.splitlines():
        if not line.startswith("EXPECT "):
            continue
        fields = dict(tok.partition("=")[::2] for tok in line.split()[1:])
        out[fields.get("kernel", "?")] = {k: int(v) if re.fullmatch(r"-?\d+", v) else v for k, v in fields.items()}
    return out


def hand_checks(expect, gs_by_name, ncu_by_name):
    """Hand-computed counts vs measured ones. gs_by_name / ncu_by_name: {kernel: {metric: value}}
    (the first launch of each kernel, all groups merged). Returns rows {check, expected, gpuscope,
    ncu, target_pct, result} judged on gpuscope's value; 'info' rows are not judged."""
    rows = []

    def add(kernel, what, expected, fn, target_pct, judged=True):
        g = fn(gs_by_name.get(kernel, {}))
        n = fn(ncu_by_name.get(kernel, {}))
        if judged:
            ok = g is not None and expected and abs(g - expected) / expected * 100 <= target_pct
            result = "PASS" if ok else ("MISSING" if g is None else "FAIL")
        else:
            result = "info"
        rows.append({"check": f"{kernel}: {what}", "expected": expected, "gpuscope": g, "ncu": n,
                     "diff_pct": None if g is None or not expected else (g - expected) / expected * 100,
                     "target_pct": target_pct if judged else None, "result": result})

    def metric(name, scale=1):
        return lambda m: None if m.get(name) is None else scale * m[name]

    def total(*names):
        return lambda m: None if any(m.get(n) is None for n in names) else sum(m[n] for n in names)

    if "copy_f4" in expect:
        add("copy_f4", "dram__bytes_read.sum + dram__bytes_write.sum = 2*4*N", expect["copy_f4"]["dram_bytes"],
            total("dram__bytes_read.sum", "dram__bytes_write.sum"), 2.0)
        add("copy_f4", "dram__bytes_read.sum = 4*N", expect["copy_f4"]["dram_read_bytes"],
            metric("dram__bytes_read.sum"), 2.0, judged=False)
    for kernel, name, scale in (("fma_loop", FFMA, 2), ("dfma_loop", DFMA, 2)):
        if kernel in expect:
            add(kernel, f"{scale} x {name.split('__')[1]} = FLOPs", expect[kernel]["flops"], metric(name, scale), 1.0)
    if "hfma2_loop" in expect:
        add("hfma2_loop", "HFMA (thread inst.) = hfma2 count", expect["hfma2_loop"]["hfma2"], metric(HFMA), 1.0)
    for kernel, e in expect.items():
        if e.get("cublas"):
            continue
        for key, name in (("global_ld_inst", "smsp__sass_inst_executed_op_global_ld.sum"),
                          ("global_st_inst", "smsp__sass_inst_executed_op_global_st.sum"),
                          ("shared_ld_inst", "smsp__sass_inst_executed_op_shared_ld.sum"),
                          ("shared_st_inst", "smsp__sass_inst_executed_op_shared_st.sum"),
                          ):
            if key in e and e[key]:
                add(kernel, f"{name} = {key}", e[key], metric(name), 1.0)
        # H100 counts a few % more shared wavefronts than a transpose issues (~20-40k per 524k
        # on a conflict-free one, ncu alike): shown, judged only as a difference below.
        for key, name in (("shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                          ("shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")):
            if key in e and e[key]:
                add(kernel, f"{name} = {key}", e[key], metric(name), 1.0, judged=False)
        if "shared_ld_bank_conflicts" in e and e["shared_ld_bank_conflicts"]:
            add(kernel, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum (31 per conflicted load)",
                e["shared_ld_bank_conflicts"], metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
                1.0, judged=False)
    # The bank conflicts' cost, by hand: the conflicted transpose's shared loads take 32
    # wavefronts, the padded one's 1, so the difference is 31 per warp-level load.
    conf, pad = expect.get("transpose_bank_conflicts"), expect.get("transpose_padded")
    if conf and pad and conf.get("n") == pad.get("n"):
        wf = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
        expected = conf["shared_ld_wavefronts"] - pad["shared_ld_wavefronts"]
        g_extra = _wavefront_extra(gs_by_name, wf)
        n_extra = _wavefront_extra(ncu_by_name, wf)
        ok = g_extra is not None and abs(g_extra - expected) / expected * 100 <= 1.0
        rows.append({"check": "transpose_bank_conflicts - transpose_padded: shared ld wavefronts = 31 per warp load",
                     "expected": expected, "gpuscope": g_extra, "ncu": n_extra,
                     "diff_pct": None if g_extra is None else (g_extra - expected) / expected * 100,
                     "target_pct": 1.0, "result": "PASS" if ok else ("MISSING" if g_extra is None else "FAIL")})
    return rows


def _wavefront_extra(by_name, metric):
    a = by_name.get("transpose_bank_conflicts", {}).get(metric)
    b = by_name.get("transpose_padded", {}).get(metric)
    return None if a is None or b is None else a - b


def calibration(shapes):
    """shapes: [{'shape': 'MxNxK', 'flops': 2MNK per dtype call, 'sums': {metric: total}}] ->
    rows per tensor counter: factor per shape (counter / FLOPs) and the spread between shapes."""
    rows = []
    for dtype, metric in TENSOR.items():
        factors = []
        for s in shapes:
            value = s["sums"].get(metric)
            factors.append(None if value is None or not s["flops"] else value / s["flops"])
        good = [f for f in factors if f]
        spread = (max(good) - min(good)) / min(good) * 100 if len(good) == len(factors) and good else None
        rows.append({"dtype": dtype, "metric": metric, "factors": factors, "spread_pct": spread,
                     "result": "PASS" if spread is not None and spread <= 1.0 else "FAIL"})
    return rows


def fmt(value):
    if value is None:
        return "—"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return f"{int(value):,}"


def fmt_pct(value):
    return "—" if value is None else ("inf" if value == float("inf") else f"{value:+.2f} %")


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(str(x).replace("|", "\\|") for x in r) + " |")
    return "\n".join(out) + "\n"


# ---- running things ---------------------------------------------------------------------------

def run(cmd, timeout, log=None, env=None):
    """Runs cmd (env: variables added to this environment); returns {'rc', 'stdout', 'stderr',
    'wall_s'} (rc None on timeout or OSError)."""
    cmd = [str(c) for c in cmd]
    print("$", " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **env) if env else None)
        res = {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr, "wall_s": time.perf_counter() - t0}
    except subprocess.TimeoutExpired as e:
        res = {"rc": None, "stdout": e.stdout if isinstance(e.stdout, str) else "",
               "stderr": f"timed out after {timeout} s", "wall_s": time.perf_counter() - t0}
    except OSError as e:
        res = {"rc": None, "stdout": "", "stderr": str(e), "wall_s": 0.0}
    print(f"  exit {res['rc']} in {res['wall_s']:.2f} s", flush=True)
    if res["rc"] != 0:
        sys.stderr.write(res["stderr"][-2000:] + "\n")
    if log:
        with open(log, "w") as f:
            f.write(f"$ {' '.join(cmd)}\nexit {res['rc']} in {res['wall_s']:.3f} s\n--- stdout\n{res['stdout']}"
                    f"\n--- stderr\n{res['stderr']}")
    return res


def run_log_stdout(log):
    """The standard output a run() log holds (the text between its '--- stdout' and
    '--- stderr' lines); "" when the log has none."""
    with open(log) as f:
        text = f.read()
    start = text.find("--- stdout\n")
    if start < 0:
        return ""
    end = text.rfind("\n--- stderr")
    return text[start + len("--- stdout\n"):end if end >= 0 else None]


# The bench suite's kernels compared with ncu: `gpuscope bench` case -> (its arguments, the
# kernel's base name, launches compared). kernel_sets_check.py uses the same.
BENCH_PROGRAMS = {"copy": (["--variant", "grid_stride_vec4", "--sizes", "2^24", "--budget", "0.2"], "copy_vec", 5),
                  "transpose": (["--variant", "tiled", "--sizes", "2^12", "--budget", "0.2"], "transpose_shared", 3)}


def bench_program(gs, case):
    """The command line of BENCH_PROGRAMS[case] with the gpuscope binary gs."""
    return [gs, "bench", case, *BENCH_PROGRAMS[case][0]]


def gs_launches(db):
    """Profiled launches of a gpuscope kernels database, in launch order."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        profiles = con.execute(
            "SELECT p.id, p.pid, p.launch_index, n.value, s.value FROM kernel_profiles p "
            "LEFT JOIN strings n ON n.id = p.name_id LEFT JOIN strings s ON s.id = p.short_name_id "
            "ORDER BY p.pid, p.launch_index").fetchall()
        metrics = {}
        for pid_, metric, value in con.execute("SELECT profile_id, metric, value FROM v_kernel_metrics"):
            metrics.setdefault(pid_, {})[metric] = value
    finally:
        con.close()
    return [{"id": i, "pid": pid, "launch_index": li, "full_name": name,
             "name": normalize_name(short or name), "metrics": metrics.get(i, {})}
            for i, pid, li, name, short in profiles]


class Checker:
    def __init__(self, a):
        self.a = a
        self.gs = os.path.join(a.build, "bin", "gpuscope")
        self.km = os.path.join(a.build, "bin", "kernel_mix")
        self.ncu = a.ncu or shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
        self.work = os.path.join(a.out, "kernels_work")
        os.makedirs(self.work, exist_ok=True)
        self.ok = True
        self.notes = []
        self.report = {"settings": {"ncu": self.ncu, "rounds": a.rounds, "ncu_flags": self.ncu_flags(),
                                    "targets": {k: {"relative_pct": v[0], "floor": v[1]} for k, v in TARGETS.items()}}}

    @staticmethod
    def ncu_flags():
        return ["--csv", "--print-units", "base", "--clock-control", "none", "--cache-control", CACHE_CONTROL,
                "--print-kernel-base", "function"]

    def fail(self, note):
        self.ok = False
        self.notes.append(note)

    def gs_cmd(self, metrics, db_stem, prog, kfilter=None, count=None, metric_set=None):
        cmd = [self.gs, "kernels", "--cache-control", CACHE_CONTROL]
        cmd += ["--set", metric_set] if metric_set else ["--metrics", ",".join(metrics)]
        cmd += ["-o", db_stem, "-f"]
        if kfilter:
            cmd += ["-k", kfilter]
        if count:
            cmd += ["--launch-count", str(count)]
        return cmd + ["--", *prog]

    def ncu_cmd(self, metrics, prog, kfilter=None, count=None):
        cmd = [self.ncu, "--metrics", ",".join(metrics), *self.ncu_flags()]
        if kfilter:
            cmd += ["--kernel-name", f"regex:{kfilter}"]
        if count:
            cmd += ["--launch-count", str(count)]
        return cmd + list(prog)

    # 1. counters side by side
    def compare_case(self, label, group, prog, kfilter=None, count=None):
        metrics = GROUPS[group]
        tag = re.sub(r"[^A-Za-z0-9]+", "_", f"{label}_{group}").strip("_")
        gs_rounds, ncu_rounds, stdout = [], [], ""
        for r in range(self.a.rounds):
            stem = os.path.join(self.work, f"{tag}_r{r}")
            res = run(self.gs_cmd(metrics, stem, prog, kfilter, count), self.a.timeout, f"{stem}.gs.log")
            stdout = stdout if "EXPECT " in stdout else res["stdout"]
            if res["rc"] == 0 and os.path.exists(f"{stem}.sqlite"):
                gs_rounds.append(gs_launches(f"{stem}.sqlite"))
            else:
                self.fail(f"{label} [{group}] round {r}: gpuscope kernels exit {res['rc']}: {res['stderr'][-300:]!r}")
            res = run(self.ncu_cmd(metrics, prog, kfilter, count), self.a.timeout, f"{stem}.ncu.log")
            stdout = stdout if "EXPECT " in stdout else res["stdout"]
            parsed = parse_ncu_csv(res["stdout"]) if res["rc"] == 0 else []
            if parsed:
                ncu_rounds.append(parsed)
            else:
                self.fail(f"{label} [{group}] round {r}: ncu exit {res['rc']}, {len(parsed)} results: "
                          f"{(res['stderr'] or res['stdout'])[-300:]!r}")
        gs, ncu = combine_rounds(gs_rounds), combine_rounds(ncu_rounds)
        pairs, only_gs, only_ncu = match_launches(gs, ncu)
        rows = []
        for name, g, n in pairs:
            for m in metrics:
                noise = g.get("spread", {}).get(m, 0.0) + n.get("spread", {}).get(m, 0.0)
                j = judge(m, g["metrics"].get(m), n["metrics"].get(m), noise)
                rows.append({"case": label, "group": group, "launch": name, "metric": m,
                             "gpuscope": g["metrics"].get(m), "ncu": n["metrics"].get(m), **j})
        case = {"case": label, "group": group, "program": [str(x) for x in prog], "filter": kfilter, "count": count,
                "gpuscope_launches": len(gs), "ncu_launches": len(ncu), "matched": len(pairs),
                "only_gpuscope": only_gs, "only_ncu": only_ncu, "rows": rows,
                "rounds": {"gpuscope": len(gs_rounds), "ncu": len(ncu_rounds)}}
        if gs and ncu and (only_gs or only_ncu):
            self.fail(f"{label} [{group}]: launches differ: only gpuscope {only_gs[:6]}, only ncu {only_ncu[:6]}")
        if not pairs:
            self.fail(f"{label} [{group}]: no launch matched (gpuscope {len(gs)}, ncu {len(ncu)})")
        bad = [r for r in rows if r["result"] != "PASS"]
        if bad:
            self.ok = False
        return case, gs, ncu, parse_expect(stdout)

    # 3. speed
    def speed(self):
        prog = [self.km, "--launches", "200"]
        untraced = [run(prog, self.a.timeout) for _ in range(3)]
        gs_runs, counts, per_launch, counts1, fixed = [], [], [], [], []
        for r in range(3):
            stem = os.path.join(self.work, f"speed_r{r}")
            res = run(self.gs_cmd(None, stem, prog, metric_set="quick"), self.a.timeout, f"{stem}.gs.log")
            gs_runs.append(res)
            if res["rc"] == 0 and os.path.exists(f"{stem}.sqlite"):
                counts.append(len(gs_launches(f"{stem}.sqlite")))
            # The same without replay (one pass, sessions of many launches), and with a filter
            # that matches nothing (gpuscope's fixed cost: start, chip probe, import).
            stem1 = os.path.join(self.work, f"speed_r{r}_replay_none")
            cmd = self.gs_cmd(None, stem1, prog, metric_set="quick")
            per_launch.append(run(cmd[:2] + ["--replay-mode", "none"] + cmd[2:], self.a.timeout,
                                  f"{stem1}.gs.log"))
            if per_launch[-1]["rc"] == 0 and os.path.exists(f"{stem1}.sqlite"):
                counts1.append(len(gs_launches(f"{stem1}.sqlite")))
            stem0 = os.path.join(self.work, f"speed_r{r}_none")
            fixed.append(run(self.gs_cmd(None, stem0, prog, kfilter="^no_such_kernel$", metric_set="quick"),
                             self.a.timeout, f"{stem0}.gs.log"))
        ncu_runs = []
        for r in range(self.a.ncu_speed_runs):
            res = run(self.ncu_cmd(QUICK, prog), self.a.timeout, os.path.join(self.work, f"speed_r{r}.ncu.log"))
            res["results"] = len(parse_ncu_csv(res["stdout"])) if res["rc"] == 0 else 0
            ncu_runs.append(res)

        def med(runs):
            walls = [x["wall_s"] for x in runs if x["rc"] == 0]
            return statistics.median(walls) if walls else None
        out = {"untraced_s": med(untraced), "gpuscope_s": med(gs_runs), "ncu_s": med(ncu_runs),
               "gpuscope_replay_none_s": med(per_launch), "gpuscope_no_match_s": med(fixed),
               "gpuscope_profiles": counts, "gpuscope_replay_none_profiles": counts1, "ncu_results": [x["results"] for x in ncu_runs],
               "untraced_walls": [x["wall_s"] for x in untraced], "gpuscope_walls": [x["wall_s"] for x in gs_runs],
               "gpuscope_replay_none_walls": [x["wall_s"] for x in per_launch],
               "gpuscope_no_match_walls": [x["wall_s"] for x in fixed],
               "ncu_walls": [x["wall_s"] for x in ncu_runs]}
        out["ratio"] = out["ncu_s"] / out["gpuscope_s"] if out["ncu_s"] and out["gpuscope_s"] else None
        out["ratio_replay_none"] = (out["ncu_s"] / out["gpuscope_replay_none_s"]
                                    if out["ncu_s"] and out["gpuscope_replay_none_s"] else None)
        complete = counts and all(c == 200 for c in counts) and all(x["results"] == 200 for x in ncu_runs)
        out["result"] = "PASS" if out["ratio"] is not None and out["ratio"] >= self.a.speed_target and complete else "FAIL"
        if not complete:
            self.notes.append(f"speed: profiled launches gpuscope {counts}, ncu {out['ncu_results']} (expected 200 each)")
        if out["result"] != "PASS":
            self.ok = False
        return out

    # 4. FLOP calibration
    def calibrate(self):
        shapes = []
        for shape in GEMM_SHAPES:
            m, n, k = (int(x) for x in shape.split("x"))
            stem = os.path.join(self.work, f"calib_{shape}")
            prog = [self.km, "--only", "gemm", "--gemm", shape]
            res = run(self.gs_cmd(GROUPS["tensor"], stem, prog), self.a.timeout, f"{stem}.gs.log")
            sums = {}
            if res["rc"] == 0 and os.path.exists(f"{stem}.sqlite"):
                for launch in gs_launches(f"{stem}.sqlite"):
                    for metric, value in launch["metrics"].items():
                        if value is not None:
                            sums[metric] = sums.get(metric, 0.0) + value
                if "ok=1" not in res["stdout"]:
                    self.fail(f"calibration {shape}: kernel_mix's GEMM self-check failed under gpuscope kernels")
            else:
                self.fail(f"calibration {shape}: gpuscope kernels exit {res['rc']}: {res['stderr'][-300:]!r}")
            shapes.append({"shape": shape, "flops": 2 * m * n * k, "sums": sums})
        rows = calibration(shapes)
        if any(r["result"] != "PASS" for r in rows):
            self.ok = False
        return {"shapes": shapes, "rows": rows}


def first_by_name(launches):
    """{base name: metrics of its first launch}."""
    out = {}
    for launch in launches:
        out.setdefault(launch["name"], dict(launch["metrics"]))
    return out


def write_report(out_dir, checker, cases, hand, speed, calib):
    md = ["# gpuscope kernels vs Nsight Compute\n"]
    s = checker.report["settings"]
    md.append(f"ncu: `{s['ncu']}` with `{' '.join(s['ncu_flags'])}`: no clock locking and no cache flushing, "
              "as gpuscope's kernel replay (which neither locks clocks nor flushes caches); separate processes, "
              f"gpuscope then ncu, {s['rounds']} round(s), medians compared. Launches matched by base name and order.\n")
    md.append("Targets: |gpuscope - ncu| <= max(relative target x |ncu|, floor, noise): " + "; ".join(
        f"{k} {v[0]:g} % (floor {FLOOR_TEXT[k]})" for k, v in TARGETS.items()) +
        ". noise = spread (max - min) of gpuscope's rounds + spread of ncu's rounds for that launch and metric; "
        "passes that needed it are counted in the summary (column 'passed on noise').\n")

    md.append("\n## Summary\n")
    summary = []
    all_rows = [r for c in cases for r in c["rows"]]
    for c in cases:
        rows = c["rows"]
        worst = {}
        for r in rows:
            if r["diff_pct"] is not None:
                worst[r["kind"]] = max(worst.get(r["kind"], 0.0), abs(r["diff_pct"]))
        fails = sum(r["result"] != "PASS" for r in rows)
        on_noise = sum(r["result"] == "PASS" and r.get("basis") == "noise" for r in rows)
        summary.append((c["case"], c["group"], f"{c['matched']} ({c['gpuscope_launches']} / {c['ncu_launches']})",
                        len(rows), on_noise, ", ".join(f"{k} {v:.2f} %" for k, v in sorted(worst.items())) or "—",
                        "PASS" if not fails and c["matched"] and not c["only_gpuscope"] and not c["only_ncu"]
                        else f"FAIL ({fails})"))
    if hand:
        hf = sum(r["result"] in ("FAIL", "MISSING") for r in hand)
        summary.append(("hand-computed counts", "", "", len(hand), "", "", "PASS" if not hf else f"FAIL ({hf})"))
    if speed:
        summary.append(("speed: kernel_mix --launches 200", "quick", "", "", "",
                        f"ncu / gpuscope = {speed['ratio']:.1f}x" if speed["ratio"] else "—", speed["result"]))
    if calib:
        cf = sum(r["result"] != "PASS" for r in calib["rows"])
        summary.append(("FLOP calibration", "tensor", "", len(calib["rows"]), "", "", "PASS" if not cf else f"FAIL ({cf})"))
    md.append(markdown_table(["case", "group", "launches matched (gpuscope / ncu)", "values", "passed on noise",
                              "max |diff| by kind", "result"], summary))

    if hand:
        md.append("\n## Hand-computed counts (kernel_mix EXPECT lines), judged on gpuscope\n")
        md.append(markdown_table(["check", "expected", "gpuscope", "ncu", "gpuscope vs expected", "target", "result"],
                                 [(r["check"], fmt(r["expected"]), fmt(r["gpuscope"]), fmt(r["ncu"]), fmt_pct(r["diff_pct"]),
                                   "—" if r["target_pct"] is None else f"{r['target_pct']:g} %", r["result"])
                                  for r in hand]))
    if speed:
        md.append("\n## Speed: `kernel_mix --launches 200`, end to end\n")
        def row(label, key, profiled):
            walls = speed.get(key.replace("_s", "_walls"), [])
            return (label, f"{speed[key]:.3f} s" if speed.get(key) else "—", ", ".join(f"{w:.3f}" for w in walls),
                    profiled)
        md.append(markdown_table(["run", "wall (median)", "runs", "launches profiled"], [
            row("untraced", "untraced_s", "—"),
            row("gpuscope kernels --set quick", "gpuscope_s", str(speed["gpuscope_profiles"])),
            row("gpuscope kernels --set quick --replay-mode none", "gpuscope_replay_none_s",
                str(speed.get("gpuscope_replay_none_profiles"))),
            row("gpuscope kernels --set quick -k '^no_such_kernel$' (fixed cost)", "gpuscope_no_match_s", "0"),
            row("ncu --metrics <quick>", "ncu_s", str(speed["ncu_results"]))]))
        if speed.get("ratio_replay_none"):
            md.append(f"\nncu / gpuscope --replay-mode none = {speed['ratio_replay_none']:.1f}x\n")
        md.append(f"\nncu / gpuscope = {speed['ratio']:.1f}x (target >= {checker.a.speed_target:g}x): {speed['result']}\n" if speed["ratio"]
                  else f"\nncu / gpuscope: not measured: {speed['result']}\n")
    if calib:
        md.append("\n## FLOP calibration: tensor-op counters of cuBLAS GEMMs vs 2 M N K\n")
        md.append(markdown_table(["dtype", "counter", *[f"counter / FLOPs at {s['shape']}" for s in calib["shapes"]],
                                  "spread", "target", "result"],
                                 [(r["dtype"], r["metric"], *[("—" if f is None else f"{f:.5f}") for f in r["factors"]],
                                   fmt_pct(r["spread_pct"]), "within 1 %", r["result"]) for r in calib["rows"]]))
        pipe = [f"{s['shape']}: {fmt(s['sums'].get(PIPE_TENSOR))}" for s in calib["shapes"]]
        md.append(f"\n{PIPE_TENSOR} (all three GEMMs, not calibrated: tile-dependent): {'; '.join(pipe)}\n")

    md.append("\n## Every launch and metric\n")
    md.append(markdown_table(["case", "group", "launch", "metric", "gpuscope", "ncu", "diff", "noise", "result"],
                             [(r["case"], r["group"], r["launch"], r["metric"], fmt(r["gpuscope"]), fmt(r["ncu"]),
                               fmt_pct(r["diff_pct"]), fmt(r.get("noise")),
                               r["result"] + (" (noise)" if r["result"] == "PASS" and r.get("basis") == "noise" else ""))
                              for r in all_rows]))
    for c in cases:
        if c["only_gpuscope"] or c["only_ncu"]:
            md.append(f"\n- {c['case']} [{c['group']}]: only gpuscope {c['only_gpuscope']}, only ncu {c['only_ncu']}\n")
    if checker.notes:
        md.append("\n## Notes\n\n" + "".join(f"- {n}\n" for n in checker.notes))
    md.append(f"\nOverall: {'PASS' if checker.ok else 'FAIL'}. Raw logs and databases: kernels_work/.\n")
    text = "".join(md)
    with open(os.path.join(out_dir, "kernels_compare.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "kernels_compare.json"), "w") as f:
        json.dump({**checker.report, "ok": checker.ok, "notes": checker.notes, "cases": cases, "hand": hand,
                   "speed": speed, "calibration": calib}, f, indent=1, default=str)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3, help="gpuscope/ncu process pairs per case (median compared)")
    ap.add_argument("--ncu", default=None, help="ncu binary (default: ncu on PATH, else /usr/local/cuda/bin/ncu)")
    ap.add_argument("--ncu-speed-runs", type=int, default=1)
    ap.add_argument("--speed-target", type=float, default=10.0,
                    help="ncu / gpuscope wall-time ratio the speed part needs (default 10)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per subprocess")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: counters,speed,calibration")
    ap.add_argument("--cache-control", choices=("all", "none"), default=CACHE_CONTROL,
                    help="passed to both gpuscope kernels and ncu (default none: no flush; all: flushed before every pass)")
    a = ap.parse_args()
    globals()["CACHE_CONTROL"] = a.cache_control
    os.makedirs(a.out, exist_ok=True)
    skip = set(filter(None, a.skip.split(",")))
    ch = Checker(a)
    for path, what in ((ch.gs, "gpuscope"), (ch.km, "kernel_mix")):
        if not os.path.exists(path):
            ch.fail(f"{what} not found at {path} (build it, or scripts/device-bundle)")
    if not (os.path.exists(ch.ncu) or shutil.which(ch.ncu)):
        ch.fail(f"ncu not found ({ch.ncu})")

    cases, hand, speed, calib = [], [], None, None
    if "counters" not in skip:
        own = [ch.km, "--only", "own"]
        transposes = [ch.km, "--only", "transpose_bank_conflicts,transpose_padded"]
        bench_copy, bench_transpose = bench_program(ch.gs, "copy"), bench_program(ch.gs, "transpose")
        copy_sel, transpose_sel = BENCH_PROGRAMS["copy"][1:], BENCH_PROGRAMS["transpose"][1:]
        plan = [("kernel_mix own", "hw", own, None, None),
                ("kernel_mix own", "sass", own, None, None),
                ("kernel_mix own", "sol", own, None, None),
                ("kernel_mix own", "memory", own, None, None),
                ("kernel_mix own", "occupancy", own, None, None),
                ("kernel_mix transposes", "shared", transposes, None, None),
                ("kernel_mix gemm 4096^3", "tensor", [ch.km, "--only", "gemm"], None, None),
                ("bench copy 2^24", "hw", bench_copy, *copy_sel),
                ("bench transpose 2^12", "hw", bench_transpose, *transpose_sel),
                ("bench transpose 2^12", "shared", bench_transpose, *transpose_sel)]
        expect, gs_first, ncu_first = {}, {}, {}
        for label, group, prog, kfilter, count in plan:
            case, gs, ncu, exp = ch.compare_case(label, group, prog, kfilter, count)
            cases.append(case)
            if label.startswith("kernel_mix") and "gemm" not in label:
                expect.update({k: v for k, v in exp.items() if not v.get("cublas")})
                for name, m in first_by_name(gs).items():
                    gs_first.setdefault(name, {}).update(m)
                for name, m in first_by_name(ncu).items():
                    ncu_first.setdefault(name, {}).update(m)
        hand = hand_checks(expect, gs_first, ncu_first)
        if any(r["result"] in ("FAIL", "MISSING") for r in hand):
            ch.ok = False
    if "speed" not in skip:
        speed = ch.speed()
    if "calibration" not in skip:
        calib = ch.calibrate()
    write_report(a.out, ch, cases, hand, speed, calib)
    return 0 if ch.ok else 1


if __name__ == "__main__":
    sys.exit(main())
