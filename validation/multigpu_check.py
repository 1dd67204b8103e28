#!/usr/bin/env python3
"""multigpu_check: gpuscope on two GPUs (issue 20's "What it must reach"), in one call.

    multigpu_check.py --build BUILD --out OUT [--gpus 2]

Runs, each torchrun (python3 -m torch.distributed.run --standalone --nproc_per_node GPUS)
under --timeout (120 s) and all of it under --budget-s (450 s):

 (a) `gpuscope trace --pytorch=ops -- torchrun ddp_train.py --steps 20` (examples/pytorch:
     DDP over NCCL, an MLP of 4 Linear 4096x4096): both ranks are processes of the one trace
     (processes.rank 0 and 1, the pids the ranks print), each with NCCL kernels on its own GPU,
     nccl_sum has an AllReduce row on all ranks; then the same script under torch.profiler
     in separate processes (--torch-profiler: CUDA 13 allows one CUPTI client per process),
     and per rank the kernel counts by name over steps 10-14 (the trace's kernels that start
     inside the rank's NVTX ranges "step 10" .. "step 14") equal torch.profiler's;
 (b) the same under gpuscope with rank 1 sleeping 20 ms before its backward from step 5 on:
     `gpuscope stats -r stragglers --format json` names rank 1 as the rank that held the job
     back most, with Last From Step = 5; collective_trace's instances per step are the evidence;
 (c) comm_overlap of trace (a) against a computation of this script's own from the kernels
     table: per rank (its GPU) and torch_steps window, communication = the union of its NCCL
     kernels (name, after "void ", starting with "nccl" and containing "Kernel"), compute =
     the union of its other kernels, overlapped = their intersection, exposed = communication
     - overlapped, all clipped to the window; per rank summed over the steps, Communication,
     Overlapped and Exposed Comm must agree within 2 % of the rank's communication time;
 (d) validation/nccl_busbw.py plain (CUDA events, as nccl-tests) and under
     `gpuscope trace --pytorch=ops,shapes`: nccl_sum's Busbw of the AllReduce row whose Avg
     Size is each size within 5 % of the CUDA-event busbw.

Writes OUT.md (the tables side by side, pass/fail per check), OUT.json (the same as data) and
keeps traces and logs in OUT.work/. Exit status: 0 all checks passed, 1 a check failed, 77 fewer
than --gpus GPUs (OUT.md says skipped). --analyze-only re-reads OUT.work/ without running
anything but `gpuscope stats` (for working on the analysis; validation/multigpu_synthetic.py
makes such a folder from synthetic traces).
"""
import argparse
import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DDP = REPO / "examples" / "pytorch" / "ddp_train.py"
BUSBW = REPO / "validation" / "nccl_busbw.py"

# What (a)-(d) run; test_ddp.py uses smaller ones.
DDP_STEPS = 20
PROFILE_STEPS = (10, 15)  # [from, to)
SLOW_RANK, SLOW_FROM, DELAY_MS = 1, 5, 20.0
OVERLAP_TOLERANCE = 0.02  # of the rank's communication time
BUSBW_TOLERANCE = 0.05


# ---------------------------------------------------------------- running things


class Runner:
    """Runs commands with a per-command timeout inside an overall budget; logs them."""

    def __init__(self, work, budget_s, timeout_s):
        self.work, self.budget_s, self.timeout_s = work, budget_s, timeout_s
        self.t0 = time.monotonic()
        self.log = open(work / "commands.log", "a", encoding="utf-8")

    def left(self):
        return self.budget_s - (time.monotonic() - self.t0)

    def run(self, cmd, name, timeout=None, env=None):
        """Runs cmd; its stdout and stderr go to WORK/NAME.out / NAME.err. Returns
        (exit code or None when it timed out or had no time left, stdout)."""
        cmd = [str(c) for c in cmd]
        limit = min(timeout or self.timeout_s, self.left())
        line = f"$ {shlex.join(cmd)}"
        print(line, flush=True)
        self.log.write(line + "\n")
        if limit < 10:
            msg = f"  not run: {self.left():.0f} s left of the {self.budget_s} s budget"
            print(msg, flush=True)
            self.log.write(msg + "\n")
            return None, ""
        full_env = dict(os.environ, PYTHONUNBUFFERED="1")
        full_env.setdefault("NCCL_DEBUG", "WARN")
        full_env.setdefault("OMP_NUM_THREADS", "4")
        if env:
            full_env.update(env)
        t = time.monotonic()
        # A session of its own: on a timeout the whole tree (gpuscope, torchrun, the ranks) goes,
        # so that no rank keeps a GPU busy during the next run.
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=limit)
            code = p.returncode
        except subprocess.TimeoutExpired:
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            out, err = p.communicate()
            code = None
            err = (err or "") + f"\n[multigpu_check: timed out after {limit:.0f} s; its process group was ended]\n"
        (self.work / f"{name}.out").write_text(out)
        (self.work / f"{name}.err").write_text(err)
        msg = f"  exit {code} after {time.monotonic() - t:.1f} s ({name}.out/.err)"
        print(msg, flush=True)
        self.log.write(msg + "\n")
        self.log.flush()
        if code != 0:
            tail = "\n".join((out + err).strip().splitlines()[-25:])
            print("    " + tail.replace("\n", "\n    "), flush=True)
        return code, out


def torchrun(python, gpus):
    return [python, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={gpus}"]


def gpu_count():
    """GPUs nvidia-smi -L lists (0 when it is missing or fails)."""
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in r.stdout.splitlines() if line.startswith("GPU ")) if r.returncode == 0 else 0


def result_lines(text):
    """[{key: value}] of the 'RESULT k=v ...' records, also where two ranks' lines ran together
    on the shared stdout ("...ms_per_step=25.2RESULT rank=0 ...")."""
    out = []
    for chunk in re.split(r"(?=RESULT )", text):
        if chunk.startswith("RESULT "):
            line = chunk.splitlines()[0]
            out.append(dict(tok.partition("=")[::2] for tok in line.split()[1:]))
    return out


def stats_report(gs, db, name, runner=None, tag=None):
    """(rows as {column (unit): value}, notes) of `gpuscope stats DB -r NAME --format json`;
    saves the JSON as WORK/TAG.json when a runner is given; None when it fails."""
    cmd = [str(gs), "stats", str(db), "-r", name, "--format", "json"]
    if runner is not None:
        code, out = runner.run(cmd, tag or f"stats_{name}", timeout=120)
        if code != 0:
            return None
        (runner.work / f"{tag or 'stats_' + name}.json").write_text(out)
    else:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            print(f"gpuscope stats -r {name} failed: {r.stderr.strip()[-500:]}", file=sys.stderr)
            return None
        out = r.stdout
    return parse_report(out, name)


def parse_report(text, name):
    doc = json.loads(text)["reports"][name]
    cols = [c["name"] + (f" ({c['unit']})" if c.get("unit") else "") for c in doc["columns"]]
    return [dict(zip(cols, row)) for row in doc["rows"]], [n.get("text", "") for n in doc.get("notes", [])]


def open_db(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    return con


# ---------------------------------------------------------------- independent arithmetic


def is_nccl_kernel(name):
    """NCCL's kernels: ncclDevKernel_*, ncclKernel_*, older nccl*Kernel* (demangled or mangled)."""
    name = name or ""
    if name.startswith("void "):
        name = name[5:]
    m = re.match(r"_Z(\d+)", name)
    if m:
        name = name[m.end():m.end() + int(m.group(1))]
    ident = re.split(r"[(<]", name, maxsplit=1)[0]
    return ident.startswith("nccl") and "Kernel" in ident


def union(intervals):
    """Sorted disjoint union of [start, end) pairs."""
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def clip(u, start, end):
    return [(max(s, start), min(e, end)) for s, e in u if e > start and s < end]


def length(u):
    return sum(e - s for s, e in u)


def intersection_length(a, b):
    """Length of the intersection of two sorted disjoint unions."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            total += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def normalise(name):
    name = re.sub(r"\s+", " ", name or "").strip()
    return name[5:] if name.startswith("void ") else name


def ranks_of(con):
    """{rank: {"pids": [...], "world_size": n}} of the processes with kernels."""
    out = {}
    for row in con.execute("SELECT p.pid, p.rank, p.world_size FROM processes p WHERE p.rank IS NOT NULL AND "
                           "p.pid IN (SELECT DISTINCT pid FROM kernels) ORDER BY p.pid"):
        r = out.setdefault(row["rank"], {"pids": [], "world_size": row["world_size"]})
        r["pids"].append(row["pid"])
    return out


def own_overlap(con):
    """{(rank, device, step): {"wall", "comm", "overlapped", "exposed"} in ns} from the
    kernels and torch_steps tables, computed here (not by gpuscope)."""
    out = {}
    for rank, info in ranks_of(con).items():
        pids = info["pids"]
        marks = ",".join("?" * len(pids))
        steps = con.execute(f"SELECT step, start_ns, end_ns FROM torch_steps WHERE pid IN ({marks}) ORDER BY start_ns",
                            pids).fetchall()
        by_device = {}
        for k in con.execute(f"SELECT device_id, start_ns, end_ns, name FROM v_kernels WHERE pid IN ({marks})", pids):
            comm, compute = by_device.setdefault(k["device_id"], ([], []))
            (comm if is_nccl_kernel(k["name"]) else compute).append((k["start_ns"], k["end_ns"]))
        for device, (comm, compute) in by_device.items():
            comm, compute = union(comm), union(compute)
            for st in steps:
                c = clip(comm, st["start_ns"], st["end_ns"])
                p = clip(compute, st["start_ns"], st["end_ns"])
                both = intersection_length(c, p)
                out[(rank, device, st["step"])] = {"wall": st["end_ns"] - st["start_ns"], "comm": length(c),
                                                   "overlapped": both, "exposed": length(c) - both}
    return out


# ---------------------------------------------------------------- (a) ranks, NCCL kernels, counts


def check_ranks_and_counts(db, results, torch_jsons, world, nccl_rows=None):
    """(a). results: the ranks' RESULT dicts of the traced run; torch_jsons: {rank: the
    --torch-profiler JSON}. Returns a check dict."""
    checks, tables = [], []
    con = open_db(db)
    ranks = ranks_of(con)
    want = set(range(world))
    checks.append(("every rank printed RESULT", {int(r["rank"]) for r in results} == want,
                   f"ranks {sorted(int(r['rank']) for r in results)}"))
    checks.append(("processes.rank has ranks " + ", ".join(map(str, sorted(want))) + " (with kernels)",
                   set(ranks) == want, f"found {sorted(ranks)}"))
    rows = []
    for r in sorted(results, key=lambda r: int(r["rank"])):
        rank, pid, device = int(r["rank"]), int(r["pid"]), int(r["device"])
        in_trace = pid in ranks.get(rank, {}).get("pids", [])
        nccl = [k for k in con.execute("SELECT name, device_id FROM v_kernels WHERE pid = ?", (pid,))
                if is_nccl_kernel(k["name"])]
        on_device = sum(1 for k in nccl if k["device_id"] == device)
        world_size = ranks.get(rank, {}).get("world_size")
        rows.append([rank, pid, device, "yes" if in_trace else "no", world_size, len(nccl), on_device])
        checks.append((f"rank {rank}: pid {pid} is processes.rank {rank}", in_trace, ""))
        checks.append((f"rank {rank}: world_size {world}", world_size == world, f"got {world_size}"))
        checks.append((f"rank {rank}: NCCL kernels on its GPU {device}", on_device > 0 and on_device == len(nccl),
                       f"{on_device} of {len(nccl)} NCCL kernels on device {device}"))
    tables.append(("Ranks in the trace", ["Rank", "PID", "GPU", "processes.rank", "world_size", "NCCL kernels",
                                          "on its GPU"], rows))
    if nccl_rows is not None:
        both = [r for r in nccl_rows if r.get("Collective") == "AllReduce" and r.get("Ranks") == world]
        checks.append((f"nccl_sum: AllReduce rows on all {world} ranks", bool(both),
                       f"{len(both)} of {len(nccl_rows)} rows"))
        tables.append(("nccl_sum of the DDP trace", ["Collective", "Size Range", "Count", "Ranks", "Avg Time (ns)",
                                                     "Busbw (GB/s)"],
                       [[r.get("Collective"), r.get("Size Range"), r.get("Count"), r.get("Ranks"),
                         r.get("Avg Time (ns)"), fmt(r.get("Busbw (GB/s)"))] for r in nccl_rows]))

    # Kernel counts per rank over the profiled steps.
    count_rows = []
    for rank in sorted(torch_jsons):
        tj = torch_jsons[rank]
        first, stop = tj["steps"]
        res = [r for r in results if int(r["rank"]) == rank]
        if not res:
            checks.append((f"rank {rank}: kernel counts", False, "no RESULT line of that rank in the traced run"))
            continue
        pid = int(res[0]["pid"])
        windows = con.execute("SELECT text, start_ns, end_ns FROM v_nvtx WHERE pid = ? AND text IN (%s)" %
                              ",".join("?" * (stop - first)), [pid] + [f"step {s}" for s in range(first, stop)]
                              ).fetchall()
        if len(windows) != stop - first or any(w["end_ns"] is None for w in windows):
            checks.append((f"rank {rank}: NVTX ranges step {first}..{stop - 1} in the trace", False,
                           f"found {len(windows)}"))
            continue
        gs_counts = {}
        for w in windows:
            for k in con.execute("SELECT name FROM v_kernels WHERE pid = ? AND start_ns >= ? AND start_ns < ?",
                                 (pid, w["start_ns"], w["end_ns"])):
                key = normalise(k["name"])
                gs_counts[key] = gs_counts.get(key, 0) + 1
        t_counts = {}
        for name, n in tj["kernels"].items():
            t_counts[normalise(name)] = t_counts.get(normalise(name), 0) + n
        names = sorted(set(gs_counts) | set(t_counts), key=lambda n: (-max(gs_counts.get(n, 0), t_counts.get(n, 0)), n))
        differ = [n for n in names if gs_counts.get(n, 0) != t_counts.get(n, 0)]
        for n in names:
            count_rows.append([rank, short(n), t_counts.get(n, 0), gs_counts.get(n, 0),
                               "yes" if gs_counts.get(n, 0) == t_counts.get(n, 0) else "NO",
                               "NCCL" if is_nccl_kernel(n) else ""])
        nccl_t = sum(v for n, v in t_counts.items() if is_nccl_kernel(n))
        nccl_g = sum(v for n, v in gs_counts.items() if is_nccl_kernel(n))
        checks.append((f"rank {rank}: kernel counts by name over steps {first}-{stop - 1} = torch.profiler's",
                       not differ and sum(gs_counts.values()) > 0,
                       f"{len(names)} names, gpuscope {sum(gs_counts.values())} kernels ({nccl_g} NCCL), "
                       f"torch.profiler {sum(t_counts.values())} ({nccl_t} NCCL), {len(differ)} names differ"))
    tables.append(("Kernel counts per rank (torch.profiler vs gpuscope, same steps, separate runs)",
                   ["Rank", "Kernel", "torch.profiler", "gpuscope", "equal", ""], count_rows))
    return finish("a", "both ranks in one trace, NCCL kernels on each, kernel counts = torch.profiler's", checks,
                  tables)


# ---------------------------------------------------------------- (b) stragglers


def check_stragglers(strag, trace_rows, slow_rank, slow_from, delay_ms):
    """(b). strag: (rows, notes) of the stragglers report; trace_rows: collective_trace rows."""
    checks, tables = [], []
    if strag is None:
        return finish("b", "stragglers names the slow rank from its first slow step",
                      [("gpuscope stats -r stragglers runs", False, "")], [])
    rows, notes = strag
    tables.append(("stragglers", ["Rank", "Device", "Last Arrivals", "Last (%)", "Held Back (ms)", "Held Back (%)",
                                  "Others Waited (ms)", "Last From Step"],
                   [[r.get("Rank"), r.get("Device"), r.get("Last Arrivals"), fmt(r.get("Last (%)")),
                     fmt(r.get("Held Back (ms)")), fmt(r.get("Held Back (%)")), fmt(r.get("Others Waited (ms)")),
                     fmt(r.get("Last From Step"))] for r in rows]))
    checks.append(("stragglers has a row per rank", len(rows) >= 2, f"{len(rows)} rows"))
    if rows:
        worst = max(rows, key=lambda r: r.get("Held Back (ms)") or 0)
        checks.append((f"the rank that held the job back most is rank {slow_rank}", worst.get("Rank") == slow_rank,
                       f"rank {worst.get('Rank')}, {fmt(worst.get('Held Back (ms)'))} ms held back"))
        slow = [r for r in rows if r.get("Rank") == slow_rank]
        onset = slow[0].get("Last From Step") if slow else None
        checks.append((f"rank {slow_rank}'s Last From Step = {slow_from} (the first delayed step)", onset == slow_from,
                       f"got {onset}"))
    named = [n for n in notes if f"rank {slow_rank}" in n]
    checks.append((f"a note names rank {slow_rank}", bool(named), named[0] if named else "; ".join(notes)[:300]))
    # Evidence: per step, which rank came last at its collectives and by how much.
    per_step = {}
    for r in trace_rows or []:
        s = per_step.setdefault(r.get("Step"), {"n": 0, "last": {}, "late": {}})
        s["n"] += 1
        last = r.get("Last Rank")
        s["last"][last] = s["last"].get(last, 0) + 1
        s["late"][last] = s["late"].get(last, 0) + (r.get("Lateness (ns)") or 0)
    step_rows = []
    for step in sorted(per_step, key=lambda s: (s is None, s if s is not None else 0)):
        s = per_step[step]
        lead = max(s["late"], key=lambda k: s["late"][k])
        step_rows.append([fmt(step), s["n"],
                          ", ".join(f"rank {k}: {v}" if k is not None else f"tie: {v}"
                                    for k, v in sorted(s["last"].items(), key=str)),
                          fmt(lead), fmt(s["late"][lead] / 1e6)])
    # Not a pass criterion: the first step from which the slow rank held the others back by at
    # least a quarter of the delay in every step (what an onset with a noise threshold would say).
    steady = None
    for step in sorted((s for s in per_step if s is not None), reverse=True):
        if per_step[step]["late"].get(slow_rank, 0) < 0.25 * delay_ms * 1e6:
            break
        steady = step
    notes = list(notes) + [f"first step from which rank {slow_rank} held the others back by >= "
                           f"{0.25 * delay_ms:g} ms in every step (collective_trace): {steady}"]
    tables.append((f"collective_trace per step (rank {slow_rank} sleeps {delay_ms:g} ms before backward from step "
                   f"{slow_from})", ["Step", "Instances", "Last arrivals", "Most lateness", "its lateness (ms)"],
                   step_rows))
    return finish("b", "stragglers names the slow rank from its first slow step", checks, tables, notes=notes)


# ---------------------------------------------------------------- (c) comm_overlap


def check_overlap(db, report):
    """(c). report: (rows, notes) of comm_overlap on the same trace."""
    checks, tables = [], []
    if report is None:
        return finish("c", "comm_overlap = an independent computation within 2 %",
                      [("gpuscope stats -r comm_overlap runs", False, "")], [])
    rows, notes = report
    own = own_overlap(open_db(db))
    gs = {(r["Rank"], r["Device"], r["Step"]): r for r in rows}
    checks.append(("comm_overlap has per-step rows", bool(rows) and all(k[2] is not None for k in gs),
                   f"{len(rows)} rows"))
    checks.append(("the same (rank, GPU, step) rows as torch_steps gives", set(gs) == set(own),
                   f"gpuscope {len(gs)}, own {len(own)}; only gpuscope {sorted(set(gs) - set(own))[:5]}, "
                   f"only own {sorted(set(own) - set(gs))[:5]}"))
    totals = {}
    worst_step = 0.0
    for key in sorted(set(gs) & set(own)):
        g, o = gs[key], own[key]
        t = totals.setdefault(key[:2], {"gs": [0.0, 0.0, 0.0, 0.0], "own": [0.0, 0.0, 0.0, 0.0]})
        gv = [g["Wall (ms)"], g["Communication (ms)"], g["Overlapped (ms)"], g["Exposed Comm (ms)"]]
        ov = [o["wall"] / 1e6, o["comm"] / 1e6, o["overlapped"] / 1e6, o["exposed"] / 1e6]
        for i in range(4):
            t["gs"][i] += gv[i] or 0.0
            t["own"][i] += ov[i]
        if ov[1] > 0:
            worst_step = max(worst_step, max(abs((gv[i] or 0.0) - ov[i]) for i in (1, 2, 3)) / ov[1])
    table = []
    for (rank, device), t in sorted(totals.items()):
        g, o = t["gs"], t["own"]
        comm = o[1]
        dev = [abs(g[i] - o[i]) / comm if comm > 0 else float("inf") for i in (1, 2, 3)]
        ok = comm > 0 and max(dev) <= OVERLAP_TOLERANCE
        table.append([rank, device, fmt(o[0]), fmt(g[1]), fmt(o[1]), fmt(g[2]), fmt(o[2]), fmt(g[3]), fmt(o[3]),
                      fmt(100 * g[2] / g[1] if g[1] else None), fmt(100 * o[2] / o[1] if o[1] else None),
                      fmt(100 * max(dev))])
        checks.append((f"rank {rank} GPU {device}: Communication, Overlapped, Exposed Comm over the steps within "
                       f"{OVERLAP_TOLERANCE:.0%} of its communication", ok,
                       f"largest difference {100 * max(dev):.3f} % of {comm:.3f} ms"))
    checks.append(("comm_overlap has ranks with communication", bool(totals), f"{len(totals)} ranks"))
    tables.append(("comm_overlap (gpuscope) vs own computation from the kernels table, summed over the steps (ms)",
                   ["Rank", "GPU", "Wall", "Comm gpuscope", "Comm own", "Overlapped gpuscope", "Overlapped own",
                    "Exposed gpuscope", "Exposed own", "Overlap % gpuscope", "Overlap % own", "largest diff (% of comm)"],
                   table))
    return finish("c", "comm_overlap = an independent computation within 2 %", checks, tables,
                  notes=notes + [f"largest difference in one step: {100 * worst_step:.3f} % of that step's "
                                 "communication (not a pass criterion)"])


# ---------------------------------------------------------------- (d) busbw


# nccl_busbw.py's other timings of the same sizes (RESULT keys KEY_time_us, KEY_busbw_gbs).
REFERENCES = {
    "each": "CUDA events around each torch all_reduce, the rank that waited least, calls after the first",
    "direct_loop": "ncclAllReduce called directly (ctypes, one stream, as nccl-tests), N calls between two events",
    "direct_each": "ncclAllReduce called directly, events around each call, the rank that waited least",
    "graph": "the torch calls captured in one CUDA graph and replayed between two events (nccl-tests -G)",
}


def check_busbw(plain, traced_results, nccl):
    """(d). plain: nccl_busbw.py's JSON of the untraced run; traced_results: the traced run's
    RESULT dicts; nccl: (rows, notes) of nccl_sum on the traced run."""
    checks, table = [], []
    if plain is None or nccl is None:
        return finish("d", "nccl_sum back-to-back busbw within 5 % of CUDA-event timing",
                      [("plain busbw JSON and nccl_sum both present", False,
                        f"plain {'ok' if plain else 'missing'}, nccl_sum {'ok' if nccl else 'missing'}")], [])
    rows, notes = nccl
    traced = {int(r["size"]): r for r in traced_results if "size" in r}
    graphs = []  # the same calls in one CUDA graph (nccl-tests -G): information, not the criterion
    for s in plain["sizes"]:
        size = s["bytes"]
        match = [r for r in rows if r.get("Collective") == "AllReduce" and r.get("Avg Size (bytes)") == size]
        g = match[0] if match else {}
        busbw = g.get("Busbw (GB/s)")  # over the collective's kernel: information
        b2b = g.get("Back-to-Back Busbw (GB/s)")  # over back-to-back calls, as the loop: the criterion
        diff = (b2b - s["busbw_gbs"]) / s["busbw_gbs"] if b2b is not None and s["busbw_gbs"] else None
        kdiff = (busbw - s["busbw_gbs"]) / s["busbw_gbs"] if busbw is not None and s["busbw_gbs"] else None
        ok = diff is not None and abs(diff) <= BUSBW_TOLERANCE
        tr = traced.get(size, {})
        others = [size >> 20]
        for key in REFERENCES:
            bw = s.get(f"{key}_busbw_gbs")
            d = (busbw - bw) / bw if busbw is not None and bw else None
            others += [fmt(s.get(f"{key}_time_us")), fmt(bw), fmt(100 * d) if d is not None else "-"]
        others.append(fmt(busbw))
        graphs.append(others)
        table.append([size >> 20, s["iters"], fmt(s["time_us"]), fmt(s.get("cpu_us")), s.get("queued", "-"),
                      fmt(s["busbw_gbs"]),
                      g.get("Back-to-Back Instances", "-"),
                      fmt(g["Back-to-Back Time (ns)"] / 1e3) if g.get("Back-to-Back Time (ns)") is not None else "-",
                      fmt(b2b), fmt(100 * diff) if diff is not None else "-",
                      fmt(g["Avg Transfer (ns)"] / 1e3) if g.get("Avg Transfer (ns)") is not None else "-",
                      fmt(busbw), fmt(100 * kdiff) if kdiff is not None else "-",
                      tr.get("time_us", "-"), tr.get("busbw_gbs", "-"), "pass" if ok else "FAIL"])
        checks.append((f"AllReduce {size >> 20} MiB: nccl_sum Back-to-Back Busbw within {BUSBW_TOLERANCE:.0%} of the "
                       f"CUDA-event loop", ok,
                       f"nccl_sum {fmt(b2b)} GB/s, CUDA events {s['busbw_gbs']:.2f} GB/s" +
                       ("" if match else " (no nccl_sum AllReduce row of that Avg Size)")))
    all_rows = [[r.get("Collective"), r.get("Size Range"), r.get("Count"), r.get("Ranks"), r.get("Avg Size (bytes)"),
                 r.get("Instances"), r.get("Avg Transfer (ns)"), fmt(r.get("Algbw (GB/s)")), fmt(r.get("Busbw (GB/s)")),
                 r.get("Back-to-Back Instances"), r.get("Back-to-Back Time (ns)"), fmt(r.get("Back-to-Back Busbw (GB/s)"))]
                for r in rows]
    tables = [("AllReduce bus bandwidth: the CUDA-event loop (untraced, nccl-tests style) vs nccl_sum (traced): "
               "the criterion is Back-to-Back Busbw (the same loop's calls, timed from the trace); the collective's "
               "own kernel (Busbw) is information",
               ["MiB", "iters", "event time/op (us)", "CPU time/call (us)", "queued", "event busbw (GB/s)",
                "nccl_sum back-to-back instances", "nccl_sum Back-to-Back Time (us)", "nccl_sum Back-to-Back Busbw (GB/s)",
                "diff (%)", "nccl_sum Avg Transfer (us)", "nccl_sum Busbw (GB/s)", "kernel diff (%)",
                "traced run's own event time (us)", "traced run's own event busbw", ""], table),
              ("Other CUDA-event timings of the same sizes, untraced (information; nccl_sum's diff from each): "
               + "; ".join(f"{k}: {v}" for k, v in REFERENCES.items()),
               ["MiB"] + [f"{k} {c}" for k in REFERENCES for c in ("time/op (us)", "busbw (GB/s)", "diff (%)")]
               + ["nccl_sum Busbw (GB/s)"], graphs),
              ("nccl_sum of the traced nccl_busbw.py", ["Collective", "Size Range", "Count", "Ranks", "Avg Size (bytes)",
                                                       "Instances", "Avg Transfer (ns)", "Algbw (GB/s)", "Busbw (GB/s)",
                                                       "Back-to-Back Instances", "Back-to-Back Time (ns)",
                                                       "Back-to-Back Busbw (GB/s)"],
               all_rows)]
    return finish("d", "nccl_sum back-to-back busbw within 5 % of CUDA-event timing", checks, tables,
                  notes=notes + [f"NCCL {plain.get('nccl_version', '?')}, torch {plain.get('torch_version', '?')}, "
                                 f"{plain.get('world_size')} ranks"])


# ---------------------------------------------------------------- report


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"
    return str(v)


def short(name, width=100):
    return name if len(name) <= width else name[:width - 3] + "..."


def finish(key, title, checks, tables, notes=()):
    return {"key": key, "title": title, "pass": bool(checks) and all(ok for _, ok, _ in checks),
            "checks": [{"what": w, "pass": bool(ok), "detail": d} for w, ok, d in checks], "tables": tables,
            "notes": list(notes)}


def md_table(headers, rows):
    esc = lambda v: str(v).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(map(esc, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_report(out, results, header):
    md = [f"# gpuscope on {header['gpus']} GPUs: multigpu_check", "", header["line"], ""]
    md += ["| check | result |", "|---|---|"]
    md += [f"| ({r['key']}) {r['title']} | {'PASS' if r['pass'] else 'FAIL'} |" for r in results]
    for r in results:
        md += ["", f"## ({r['key']}) {r['title']}: {'PASS' if r['pass'] else 'FAIL'}", ""]
        md += [f"- [{'ok' if c['pass'] else 'FAIL'}] {c['what']}" + (f" ({c['detail']})" if c["detail"] else "")
               for c in r["checks"]]
        for title, headers, rows in r["tables"]:
            md += ["", f"**{title}**", "", md_table(headers, rows)]
        if r["notes"]:
            md += [""] + [f"> {n}" for n in r["notes"]]
    Path(f"{out}.md").write_text("\n".join(md) + "\n")
    doc = {"header": header, "checks": [{k: v for k, v in r.items()} for r in results],
           "pass": all(r["pass"] for r in results)}
    doc["checks"] = [dict(r, tables=[{"title": t, "columns": h, "rows": rows} for t, h, rows in r["tables"]])
                     for r in results]
    Path(f"{out}.json").write_text(json.dumps(doc, indent=1, default=str))


# ---------------------------------------------------------------- main


def load_json(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(REPO / "build"), help="gpuscope build (or bundle) folder")
    p.add_argument("--out", required=True, help="writes OUT.md, OUT.json; traces and logs in OUT.work/")
    p.add_argument("--gpus", type=int, default=2, help="ranks, one GPU each (default 2)")
    p.add_argument("--python", default=sys.executable, help="python with torch (default: this one)")
    p.add_argument("--timeout", type=int, default=120, help="limit of each torchrun, s (default 120)")
    p.add_argument("--budget-s", type=int, default=450, help="limit of the whole check, s (default 450)")
    p.add_argument("--only", default="abcd", help="checks to run, e.g. 'ab' (default abcd)")
    p.add_argument("--analyze-only", action="store_true",
                   help="re-read OUT.work/: no trace, no torchrun (gpuscope stats still runs)")
    args = p.parse_args()
    build = Path(args.build).resolve()
    gs = build / "bin" / "gpuscope"
    out = Path(args.out).resolve()
    work = Path(f"{out}.work")
    work.mkdir(parents=True, exist_ok=True)
    found = None if args.analyze_only else gpu_count()
    header = {"gpus": args.gpus, "found_gpus": found, "build": str(build), "python": args.python,
              "line": f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; build {build}; work folder {work}"}
    if not gs.exists():
        print(f"multigpu_check: no gpuscope at {gs}", file=sys.stderr)
        return 2
    if not args.analyze_only:
        if found < args.gpus:
            msg = f"skipped: needs {args.gpus} GPUs, nvidia-smi -L lists {found}"
            print(msg)
            Path(f"{out}.md").write_text(f"# multigpu_check\n\n{msg}\n")
            return 77
    runner = Runner(work, args.budget_s, args.timeout)
    if not args.analyze_only:  # no figure of an earlier run may stand in for a missing one
        for old in [*work.glob("torch.rank*.json"), work / "busbw_plain.json", work / "busbw_traced.json"]:
            old.unlink(missing_ok=True)
    tr = torchrun(args.python, args.gpus)
    ddp = [*tr, DDP, "--steps", DDP_STEPS]
    world = args.gpus
    results = []

    def trace(name, target, options=("--pytorch=ops",)):
        if args.analyze_only:
            return 0, read(work / f"{name}.out")
        return runner.run([gs, "trace", "-o", work / name, "-f", "-q", *options, "--", *target], name)

    def stats(db, name, tag):  # also with --analyze-only: gpuscope stats needs no GPU
        return stats_report(gs, db, name, runner, tag)

    if "a" in args.only or "c" in args.only:
        code, text = trace("ddp", ddp, ("--pytorch=ops,shapes",))
        db = work / "ddp.sqlite"
        res = result_lines(text)
        if "a" in args.only:
            if not args.analyze_only:
                runner.run([*ddp, "--torch-profiler", work / "torch", "--profile-from", PROFILE_STEPS[0],
                            "--profile-to", PROFILE_STEPS[1]], "ddp_torch_profiler")
            torch_jsons = {r: j for r in range(world) if (j := load_json(work / f"torch.rank{r}.json"))}
            if code != 0 or not db.exists():
                results.append(finish("a", "both ranks in one trace, NCCL kernels on each, kernel counts = "
                                      "torch.profiler's", [("gpuscope trace of ddp_train.py exits 0", False,
                                                            f"exit {code}")], []))
            else:
                nccl = stats(db, "nccl_sum", "ddp_nccl_sum")
                r = check_ranks_and_counts(db, res, torch_jsons, world, nccl[0] if nccl else None)
                r["checks"].insert(0, {"what": f"torch.profiler JSON of every rank ({world})",
                                       "pass": len(torch_jsons) == world, "detail": f"{len(torch_jsons)} found"})
                r["pass"] = r["pass"] and len(torch_jsons) == world
                results.append(r)
        if "c" in args.only:
            if code != 0 or not db.exists():
                results.append(finish("c", "comm_overlap = an independent computation within 2 %",
                                      [("gpuscope trace of ddp_train.py exits 0", False, f"exit {code}")], []))
            else:
                results.append(check_overlap(db, stats(db, "comm_overlap", "ddp_comm_overlap")))
    if "b" in args.only:
        code, text = trace("slow", [*ddp, "--slow-rank", SLOW_RANK, "--slow-from", SLOW_FROM, "--delay-ms", DELAY_MS])
        db = work / "slow.sqlite"
        if code != 0 or not db.exists():
            results.append(finish("b", "stragglers names the slow rank from its first slow step",
                                  [("gpuscope trace of the slow-rank run exits 0", False, f"exit {code}")], []))
        else:
            ct = stats(db, "collective_trace", "slow_collective_trace")
            r = check_stragglers(stats(db, "stragglers", "slow_stragglers"), ct[0] if ct else None, SLOW_RANK,
                                 SLOW_FROM, DELAY_MS)
            steps = {int(x["rank"]): x.get("ms_per_step") for x in result_lines(text)}
            r["notes"].append(f"ms per step (median after step 3) by rank: {steps}")
            results.append(r)
    if "d" in args.only:
        if not args.analyze_only:
            runner.run([*tr, BUSBW, "--graph", "--direct", "--each", "--out", work / "busbw_plain.json"], "busbw_plain")
        code, text = trace("busbw", [*tr, BUSBW, "--out", work / "busbw_traced.json"], ("--pytorch=ops,shapes",))
        db = work / "busbw.sqlite"
        nccl = stats(db, "nccl_sum", "busbw_nccl_sum") if code == 0 and db.exists() else None
        r = check_busbw(load_json(work / "busbw_plain.json"), result_lines(text), nccl)
        r["checks"].insert(0, {"what": "gpuscope trace --pytorch=ops,shapes of nccl_busbw.py exits 0", "pass": code == 0,
                               "detail": f"exit {code}"})
        r["pass"] = r["pass"] and code == 0
        results.append(r)

    header["seconds"] = round(runner.budget_s - runner.left(), 1)
    results.sort(key=lambda r: r["key"])
    write_report(out, results, header)
    for r in results:
        print(f"{'PASS' if r['pass'] else 'FAIL'}  ({r['key']}) {r['title']}")
        for c in r["checks"]:
            if not c["pass"]:
                print(f"      FAIL {c['what']} ({c['detail']})")
    print(f"wrote {out}.md, {out}.json ({header['seconds']} s)")
    return 0 if results and all(r["pass"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
