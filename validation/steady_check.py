#!/usr/bin/env python3
"""gpuscope's steady state on a plain `gpuscope trace` against each program's own per-step clock (issue 39).

Six programs, each timing itself step by step (a synchronize, then the clock: validation/
steady_programs.py and examples/cuda/step_loop.cu), each with a warm-up that differs from its
steady steps:
  resnet18, transformer, generate, lightning, jax (validation/steady_programs.py) and cpp
  (build/bin/step_loop, a C++ loop of repeated kernels with an autotuning warm-up).

1. Steady iteration: each runs under `gpuscope trace -o WORK/NAME -f -- PROGRAM` (no other flag;
   GPUSCOPE_STEADY_CLOCK names its clock file), then `gpuscope stats WORK/NAME.sqlite -r
   step_sum,gpu_util,top --format json`. step_sum lists the steps of the source the judged window
   took them from (PyTorch optimizer-step marks, NVTX step ranges, or iterations found in the GPU
   work) with each step's wall time and state (warm-up, steady, outlier); gpu_util's note says
   which window is judged. gpuscope's steady iteration time is the median wall time of its steady
   steps (as step_sum's note states it: the upper one of two middle values); the program's is the
   median of its own clock over the same steps, taken alike. The steps are matched by optimizer-step number where gpuscope's steps are the PyTorch
   marks, else by their sequence of wall times against the program's (align_steps: the offset whose
   durations agree best; ties go to the offset that ends both on the last step); for generate the
   program clocks both generate() calls and tokens, and the level that matches gpuscope's steps
   better is the one compared. Targets: |gpuscope - own| <= --tolerance-pct (5) % of own; at least
   3 steady steps found; the program's own warm-up steps (the first steps while over 1.25 x the
   median of its steps after the first) all left out of gpuscope's steady steps.
2. Steady GPU idle (resnet18, transformer): the program untraced (a separate process) and under
   `gpuscope trace --pytorch=ops,modules`. gpuscope's steady GPU idle % is what `top` states on the
   judged window for the untraced program (its header note: "the GPU's idle time (N % of the wall
   time)", gpuscope's own cost taken out; else 100 - GPU Busy %); the untraced program's is
   100 x (1 - traced GPU busy per step / untraced step time), the busy time per step being the
   median GPU Busy (ms) of the steady steps in the same trace and the step time the untraced
   program's own median after its warm-up. Target: within --idle-points (5) points. --idle-rounds
   (3) rounds of the pair, the programs in turn within a round and the pair's order alternating
   from round to round; the medians of the rounds are compared, and the table says how many rounds
   each row had (fewer than asked when --budget-s ran out). A second table gives each round: what
   tracing added to the program's own step (traced own clock - untraced) beside what the trace
   prices gpuscope's own cost at a steady step (tracer_prices: counts of launches, other API calls,
   operators and module calls a step times the trace's meta prices), the most the correction can
   take out.

Writes OUT/steady_check.md and OUT/steady_check.json (one row per program, the idle rows), prints
the table. A program that cannot run here (JAX, transformers, Lightning or torchvision missing,
step_loop not built) is a row that says skipped and why; one left out by --budget-s says so too.
Exit status: 0 when every row ran and passed, 1 otherwise (a skipped row too, unless
--allow-skip), 2 for a usage error or a missing gpuscope binary.

Usage: steady_check.py --build BUILD --out OUT [--programs cpp,resnet18,...] [--no-idle]
                       [--budget-s 290] [--timeout 120] [--analyze-only]
--analyze-only reads WORK (OUT/steady_work) as an earlier run left it (NAME.clock.jsonl,
NAME.untraced.clock.jsonl, NAME.opsmod.clock.jsonl, the traces NAME.sqlite and NAME.opsmod.sqlite
or, where they are gone, their NAME.stats.json and NAME.opsmod.stats.json; NAME.log) and runs
nothing.
"""
import argparse
import bisect
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROGRAMS_PY = REPO / "validation" / "steady_programs.py"
SKIP = 77  # steady_programs.py: a package the program needs is missing

# name: (title, steps, extra arguments); cpp runs build/bin/step_loop, the others steady_programs.py.
PROGRAMS = {
    "cpp": ("C++ loop of repeated kernels (examples/cuda/step_loop.cu, 3 autotuning warm-up iterations)", 60, []),
    "resnet18": ("torchvision resnet18 training, batch 32, SGD, cuDNN autotuning", 40, []),
    "transformer": ("small GPT training, bf16 autocast, SDPA, AdamW", 40, []),
    "generate": ("HF transformers generate(), GPT-2 config, random weights, 16 tokens a call", 20, ["--new-tokens", "16"]),
    "jax": ("JAX MLP, jitted SGD step (first call compiles)", 60, []),
    "lightning": ("PyTorch Lightning Trainer.fit, DataLoader num_workers=2", 48, []),
}
IDLE_PROGRAMS = ("resnet18", "transformer")
WARMUP_FACTOR = 1.25  # the program's own warm-up: leading steps over 1.25 x the median of its later steps


# ---- reading ----------------------------------------------------------------------------------

def read_clock(path):
    """A program's clock file -> {"start_ns", "steps": [ms...], "step_end_ns": [...], "tokens": [ms...]}."""
    out = {"start_ns": None, "steps": [], "step_end_ns": [], "tokens": [], "token_end_ns": []}
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if r["kind"] == "start":
            out["start_ns"] = r["end_ns"]
        elif r["kind"] == "step":
            out["steps"].append(float(r["ms"]))
            out["step_end_ns"].append(r["end_ns"])
        elif r["kind"] == "token":
            out["tokens"].append(float(r["ms"]))
            out["token_end_ns"].append(r["end_ns"])
    return out


_TO_MS = {"ms": 1.0, "ns": 1e-6, "us": 1e-3, "µs": 1e-3, "s": 1e3}


def report_rows(rep):
    """A Report's rows as dicts keyed 'Name' or 'Name (unit)' (step_sum has GPU Busy in ms and %); times in ms."""
    cols = rep["columns"]
    keys = [c["name"] + (f" ({c['unit']})" if c.get("unit") else "") for c in cols]
    rows = []
    for row in rep["rows"]:
        d = {}
        for c, k, v in zip(cols, keys, row):
            unit = c.get("unit") or ""
            if unit in _TO_MS and isinstance(v, (int, float)) and not isinstance(v, bool):
                d[c["name"] + " (ms)"] = v * _TO_MS[unit]  # one spelling, whatever unit json carries
            d[k] = v
        rows.append(d)
    return rows


def notes(rep):
    return [n["text"] if isinstance(n, dict) else str(n) for n in rep.get("notes", [])]


def parse_stats(doc, pid=None):
    """`gpuscope stats -r step_sum,gpu_util,top --format json` -> what this check reads.

    steps: step_sum's rows (of `pid` when given) as {step, wall_ms, busy_ms, state, pid}; source: the
    note "steps: ..."; judged: the window line of gpu_util/top ("judged the steady state: ..." or "no
    repeating structure ..."); idle_untraced_pct: top's idle share of the wall time without gpuscope's
    own cost; busy_pct: top's GPU Busy (%); gs_median_ms: the median of the steady steps as step_sum
    computes it (the upper median)."""
    reps = doc["reports"]
    out = {"steps": [], "source": None, "steady_note": None, "judged": None, "idle_untraced_pct": None,
           "idle_phrase": None, "busy_pct": None, "gpu_util_busy_pct": None}
    ss = reps.get("step_sum")
    if ss:
        for r in report_rows(ss):
            if pid is not None and r.get("PID") not in (None, pid):
                continue
            out["steps"].append({"step": r.get("Step"), "wall_ms": r.get("Wall (ms)"),
                                 "busy_ms": r.get("GPU Busy (ms)"), "state": r.get("State"), "pid": r.get("PID")})
        for n in notes(ss):
            if n.startswith("steps: "):
                out["source"] = n[len("steps: "):]
            elif n.startswith("steady state:") or n.startswith("no steady state"):
                out["steady_note"] = n
    for name in ("gpu_util", "top"):
        for n in notes(reps.get(name, {})):
            if out["judged"] is None and (n.startswith("judged the steady state") or
                                          n.startswith("no repeating structure")):
                out["judged"] = n
    top = reps.get("top")
    if top:
        rows = report_rows(top)
        if rows:
            out["busy_pct"] = rows[0].get("GPU Busy (%)")
        for n in notes(top):
            m = re.search(r"GPU's idle time \((<?\s*[\d.]+)\s*% of the wall time\)", n)
            if m:
                out["idle_untraced_pct"], out["idle_phrase"] = _pct(m.group(1)), "top: idle share without gpuscope's cost"
                break
        if out["idle_untraced_pct"] is None:
            for n in notes(top):
                m = re.search(r"GPU was idle (<?\s*[\d.]+)\s*%", n)
                if m:
                    out["idle_untraced_pct"], out["idle_phrase"] = _pct(m.group(1)), "top: 'the GPU was idle'"
                    break
        if out["idle_untraced_pct"] is None and out["busy_pct"] is not None:
            out["idle_untraced_pct"], out["idle_phrase"] = 100.0 - out["busy_pct"], "top: 100 - GPU Busy (traced)"
    gu = reps.get("gpu_util")
    if gu:
        rows = report_rows(gu)
        if rows:
            out["gpu_util_busy_pct"] = rows[0].get("Busy (%)")
    steady = [s["wall_ms"] for s in out["steps"] if s["state"] == "steady" and s["wall_ms"] is not None]
    out["gs_median_ms"] = upper_median(steady) if steady else None
    return out


def upper_median(xs):
    """The median as step_sum states it: the middle value, the upper one of two (both clocks use it)."""
    xs = sorted(xs)
    return xs[len(xs) // 2]


def _pct(text):
    return float(text.replace("<", "").strip())


def gpuscope_stats(gs, db, pid=None, timeout=120):
    """parse_stats of `gpuscope stats DB -r step_sum,gpu_util,top --format json`, the JSON kept beside the
    trace as NAME.stats.json (the work folder travels without traces); where DB is gone, that file is read."""
    db = Path(db)
    saved = db.with_suffix(".stats.json")
    if not db.exists() and saved.exists():
        return parse_stats(json.loads(saved.read_text()), pid)
    r = subprocess.run([str(gs), "stats", str(db), "-r", "step_sum,gpu_util,top", "--format", "json"],
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"gpuscope stats {db} exited {r.returncode}: {(r.stderr or r.stdout).strip()[-800:]}")
    doc = json.loads(r.stdout)
    if os.access(db.parent, os.W_OK):
        saved.write_text(r.stdout)
    return parse_stats(doc, pid)


# ---- comparing --------------------------------------------------------------------------------

def own_warmup(ms):
    """How many leading steps of the program's own clock are warm-up: while over 1.25 x the median of its
    steps after the first (0 when the first is not). The median of all later steps, not of the last half:
    a program whose steps drift (generate()'s got 35 % faster over its last ten calls on the H100) would
    otherwise call an ordinary early step warm-up."""
    if len(ms) < 4:
        return 0
    ref = statistics.median(ms[1:])
    n = 0
    while n < len(ms) and ms[n] > WARMUP_FACTOR * ref:
        n += 1
    return n


ALIKE_COST = 0.1  # align_steps: offsets whose costs differ by less are alike


def align_steps(walls, prog_ms):
    """Offset o so that gpuscope's step k is the program's step o + k, from the durations alone.

    Cost of an offset: the sum over matched steps of the relative difference |wall_k - prog_{o+k}| /
    max(wall_k, prog_{o+k}) (at most 1), the last gpuscope step left out (its wall ends at its GPU end,
    not at the next step), plus 1 for each gpuscope step with no program step. Relative, not over the
    median step: a 4 s compile step matched to a 4.4 s one is a near match (JAX's first step). Offsets
    within ALIKE_COST of the least cost are alike (a run of equal steps fits many offsets); of those the
    one closest to ending both on the last step wins. ALIKE_COST is small: one step matched well or not
    (JAX's compile step against its own, or against a 3 ms step) must decide. Returns (offset, cost)."""
    k_n, s_n = len(walls), len(prog_ms)
    if k_n == 0 or s_n == 0:
        return None, float("inf")
    costs = {}
    for o in range(-(k_n - 1), s_n):
        c = 0.0
        for k, w in enumerate(walls):
            j = o + k
            if not 0 <= j < s_n:
                c += 1.0
            elif k < k_n - 1 and w is not None:
                c += abs(w - prog_ms[j]) / (max(w, prog_ms[j]) or 1.0)
        costs[o] = c
    best = min(costs.values())
    end = s_n - k_n
    o = min((o for o, c in costs.items() if c <= best + ALIKE_COST), key=lambda o: (abs(o - end), costs[o]))
    return o, costs[o]


def compare(stats, clock, tolerance_pct):
    """One program's comparison (part 1) from its parsed stats and clock: a dict for the table."""
    steps = stats["steps"]
    levels = {"step": clock["steps"]}
    if clock["tokens"]:
        levels["token"] = clock["tokens"]
    row = {"source": stats["source"], "judged": stats["judged"], "gs_steps": len(steps),
           "gs_steady": sum(s["state"] == "steady" for s in steps),
           "gs_warmup": sum(s["state"] == "warm-up" for s in steps),
           "gs_outliers": sum(s["state"] == "outlier" for s in steps),
           "gs_median_ms": stats["gs_median_ms"], "steady_note": stats["steady_note"]}
    if not steps or row["gs_steady"] < 3 or stats["gs_median_ms"] is None:
        row.update(status="fail", why=f"gpuscope found no steady state ({row['gs_steady']} steady steps; "
                                      f"{stats['judged'] or stats['steady_note'] or 'no note'})")
        return row
    walls = [s["wall_ms"] for s in steps]
    if (stats["source"] or "").startswith("PyTorch") and all(isinstance(s["step"], int) for s in steps) \
            and max(s["step"] for s in steps) < len(clock["steps"]):
        level, offset, method = "step", 0, "by optimizer.step() number (torch_steps.step = the program's step)"
        index = [s["step"] for s in steps]
    else:
        fits = {name: align_steps(walls, ms) for name, ms in levels.items()}
        level = min(fits, key=lambda n: fits[n][1])
        offset, cost = fits[level]
        method = f"by the sequence of step times (offset {offset:+d}, cost {cost:.2f})"
        index = [offset + k for k in range(len(steps))]
    prog = levels[level]
    steady_idx = [j for s, j in zip(steps, index) if s["state"] == "steady" and 0 <= j < len(prog)]
    # The program's own warm-up on the level compared (generate at token level: its leading slow tokens).
    warm = own_warmup(prog)
    own_same = upper_median([prog[j] for j in steady_idx]) if steady_idx else None
    own_after = upper_median(prog[warm:]) if len(prog) > warm else None
    err = 100.0 * (stats["gs_median_ms"] - own_same) / own_same if own_same else None
    first_steady = min(steady_idx) if steady_idx else None
    left_out = first_steady is not None and first_steady >= warm
    row.update(level=level, method=method, own_steps=len(prog), own_warmup=warm,
               own_median_same_ms=own_same, own_median_after_warmup_ms=own_after, err_pct=err,
               first_steady_own_step=first_steady, warmup_left_out=left_out,
               own_first_ms=prog[0] if prog else None)
    fails = []
    if err is None or abs(err) > tolerance_pct:
        fails.append(f"steady {stats['gs_median_ms']:.3f} ms vs own {own_same if own_same else float('nan'):.3f} ms "
                     f"({err if err is not None else float('nan'):+.2f} %, limit {tolerance_pct} %)")
    if not left_out:
        fails.append(f"warm-up not left out: the first steady step is the program's {first_steady} (own warm-up: "
                     f"{warm} {level}s)")
    row.update(status="fail" if fails else "pass", why="; ".join(fails))
    return row


def compare_idle(stats, untraced_clock, points, traced_clock=None):
    """Part 2 from the --pytorch=ops,modules trace's stats and the untraced program's clock (traced_clock: the
    traced program's own, shown beside: what recording operators and modules cost a step)."""
    busy = sorted(s["busy_ms"] for s in stats["steps"] if s["state"] == "steady" and s["busy_ms"] is not None)
    ms = untraced_clock["steps"]
    warm = own_warmup(ms)
    row = {"source": stats["source"], "judged": stats["judged"], "idle_phrase": stats["idle_phrase"],
           "traced_busy_pct": stats["busy_pct"], "gpu_util_busy_pct": stats["gpu_util_busy_pct"],
           "traced_step_ms": stats["gs_median_ms"]}
    if not busy or len(ms) <= warm:
        row.update(status="fail", why="no steady steps in the traced run or no steps in the untraced one")
        return row
    busy_ms = upper_median(busy)
    untraced_ms = upper_median(ms[warm:])
    traced_ms = traced_clock["steps"] if traced_clock else []
    traced_own = upper_median(traced_ms[own_warmup(traced_ms):]) if traced_ms else None
    row.update(untraced_warmup=warm, traced_own_ms=traced_own)
    return _judge_idle(row, busy_ms, untraced_ms, stats["idle_untraced_pct"], points)


PRICE_KEYS = (("launches", "tracer_launch_cost_ns"), ("other_calls", "tracer_api_cost_ns"),
              ("ops", "tracer_torch_op_cost_ns"), ("modules", "tracer_torch_module_cost_ns"))


def tracer_prices(db, pid, steps):
    """What the trace prices gpuscope's own cost at, per steady step: {launches, other_calls, ops,
    modules: the median count a step; prices_ns: the trace's meta prices (tracer_launch_cost_ns for a
    launch call, one with a kernel of the same correlation id; tracer_api_cost_ns for every other
    recorded API call; tracer_torch_op_cost_ns and tracer_torch_module_cost_ns for an operator or
    module call; a price the trace lacks counts 0); priced_ms: the (upper) median over the steps of
    their priced sum}. steps: the step numbers step_sum calls steady, whose spans torch_steps gives
    (start_ns to end_ns of `pid`); a call counts in the step its start falls in. None when the trace
    is gone or has no such steps. This is what the critical-path correction may take out at most
    (docs/stats.md), beside what tracing added to the program's own step."""
    if db is None or not Path(db).exists() or not steps:
        return None
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        meta = dict(con.execute("SELECT key, value FROM meta WHERE key LIKE 'tracer_%cost_ns'"))
        prices = {k: float(meta.get(m) or 0.0) for k, m in PRICE_KEYS}
        wanted = set(steps)
        spans = [(a, b) for n, a, b in con.execute(
            "SELECT step, start_ns, end_ns FROM torch_steps WHERE (? IS NULL OR pid = ?) ORDER BY step", (pid, pid))
            if n in wanted and a is not None and b is not None]
        if not spans:
            return None
        api = ("SELECT start_ns FROM api_calls a WHERE (? IS NULL OR pid = ?) AND {} EXISTS "
               "(SELECT 1 FROM kernels k WHERE k.pid = a.pid AND k.correlation_id = a.correlation_id)")
        ranges = "SELECT e.start_ns FROM {} t JOIN nvtx_events e ON e.id = t.nvtx_id WHERE (? IS NULL OR t.pid = ?)"
        queries = {"launches": api.format(""), "other_calls": api.format("NOT"),
                   "ops": ranges.format("torch_ops"), "modules": ranges.format("torch_modules")}
        counts = {}
        for kind, sql in queries.items():
            try:
                starts = sorted(t for (t,) in con.execute(sql, (pid, pid)) if t is not None)
            except sqlite3.OperationalError:  # a trace without that table
                starts = []
            counts[kind] = [bisect.bisect_left(starts, b) - bisect.bisect_left(starts, a) for a, b in spans]
    finally:
        con.close()
    priced = [sum(counts[k][i] * prices[k] for k in counts) / 1e6 for i in range(len(spans))]
    out = {k: upper_median(v) for k, v in counts.items()}
    out.update(prices_ns=prices, priced_ms=upper_median(priced), priced_steps=len(spans))
    return out


def _judge_idle(row, busy_ms, untraced_ms, gs_idle, points, how=""):
    """row with the untraced idle (100 x (1 - busy / untraced step)), gpuscope's, their difference and the
    verdict (within `points`); `how` ends the reason of a failure ("; medians of 3 rounds")."""
    untraced_idle = 100.0 * (1.0 - busy_ms / untraced_ms)
    diff = None if gs_idle is None else gs_idle - untraced_idle
    row.update(busy_ms=busy_ms, untraced_ms=untraced_ms, untraced_idle_pct=untraced_idle, gs_idle_pct=gs_idle,
               diff_points=diff)
    if diff is None:
        row.update(status="fail", why="top states no idle share")
    elif abs(diff) > points:
        row.update(status="fail", why=f"idle {gs_idle:.1f} % vs untraced {untraced_idle:.1f} % "
                                      f"({diff:+.1f} points, limit {points}{how})")
    else:
        row.update(status="pass", why="")
    return row


def _rounds_text(row):
    """'; medians of 3 rounds (each: +9.2, +6.1, +7.0 points)' for a row of several rounds, '; one
    round' for one; either says when the budget left fewer rounds than asked ('; 2 of 3 rounds asked')."""
    diffs = row.get("round_diffs") or []
    asked = row.get("rounds_asked") or 0
    done = row.get("rounds", len(diffs))
    short = f" ({done} of {asked} asked: the budget ran out)" if asked > done else ""
    if len(diffs) < 2:
        return f"; one round{short}"
    each = ", ".join("-" if d is None else f"{d:+.1f}" for d in diffs)
    return f"; medians of {len(diffs)} rounds{short} (each: {each} points)"


def round_summary(r):
    """One round of part 2 for the per-round table: its steps, what tracing added to the program's own
    step (traced own clock - untraced), what the trace prices a step at (tracer_prices) and the idle
    shares."""
    added = (r["traced_own_ms"] - r["untraced_ms"]
             if r.get("traced_own_ms") is not None and r.get("untraced_ms") is not None else None)
    prices = r.get("prices") or {}
    return {k: r.get(k) for k in ("round", "traced_first", "busy_ms", "untraced_ms", "traced_own_ms",
                                  "untraced_idle_pct", "gs_idle_pct", "diff_points")} | {
        "added_ms": added, "priced_ms": prices.get("priced_ms"),
        "counts": {k: prices.get(k) for k, _ in PRICE_KEYS} if prices else None,
        "prices_ns": prices.get("prices_ns")}


def combine_idle_rounds(rows, points):
    """Part 2 over several rounds (untraced and traced runs alternating): the medians of the rounds'
    traced busy per step, untraced step and gpuscope idle, the untraced idle recomputed from those
    medians. One process's step time moved by a third between two device calls on the same machine,
    so one pair of runs cannot hold a few points; a round that failed to measure is left out."""
    done = [r for r in rows if r.get("busy_ms") is not None and r.get("untraced_ms") is not None]
    if len(rows) == 1 or not done:
        return dict(rows[0], rounds=len(done), round_rows=[round_summary(r) for r in done])
    med = statistics.median
    row = dict(done[-1])
    def median_of(key):
        values = [r[key] for r in done if r.get(key) is not None]
        return med(values) if values else None
    row.update(traced_step_ms=median_of("traced_step_ms"), traced_own_ms=median_of("traced_own_ms"),
               rounds=len(done), round_diffs=[r.get("diff_points") for r in done],
               round_rows=[round_summary(r) for r in done])
    return _judge_idle(row, median_of("busy_ms"), median_of("untraced_ms"), median_of("gs_idle_pct"), points,
                       f"; medians of {len(done)} rounds")


# ---- running ----------------------------------------------------------------------------------

# What a run or its reading can raise besides Skipped: the row fails with it.
RUN_ERRORS = (RuntimeError, OSError, ValueError, KeyError, json.JSONDecodeError, subprocess.TimeoutExpired)


class Runner:
    def __init__(self, a):
        self.a = a
        self.gs = Path(a.build) / "bin" / "gpuscope"
        self.work = Path(a.out) / "steady_work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.t0 = time.monotonic()

    def left(self):
        return self.a.budget_s - (time.monotonic() - self.t0)

    def command(self, name):
        steps = self.a.steps.get(name, PROGRAMS[name][1])
        if name == "cpp":
            return [str(Path(self.a.build) / "bin" / "step_loop"), "--iterations", str(steps)]
        return [self.a.python, str(PROGRAMS_PY), name, "--steps", str(steps), *PROGRAMS[name][2]]

    def run(self, name, tag, cmd, trace_options=None):
        """Runs cmd (under gpuscope trace with trace_options, unless None) with its clock file; returns
        (clock path, trace path or None). Raises Skipped / RuntimeError."""
        clock = self.work / f"{name}{tag}.clock.jsonl"
        trace = self.work / f"{name}{tag}"
        if self.a.analyze_only:
            if not clock.exists():
                raise Skipped(f"no {clock.name} in {self.work} (--analyze-only)")
            return clock, (Path(f"{trace}.sqlite") if trace_options is not None else None)
        if self.left() < self.a.min_run_s:
            raise Skipped(f"budget: {self.left():.0f} s left of --budget-s {self.a.budget_s}")
        clock.unlink(missing_ok=True)
        full = cmd if trace_options is None else [str(self.gs), "trace", "-o", str(trace), "-f", *trace_options,
                                                   "--", *cmd]
        env = dict(os.environ, GPUSCOPE_STEADY_CLOCK=str(clock), PYTHONUNBUFFERED="1")
        t = time.monotonic()
        try:
            r = subprocess.run(full, capture_output=True, text=True, env=env,
                               timeout=max(10, min(self.a.timeout, self.left())))
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{' '.join(full[:6])} ... timed out")
        (self.work / f"{name}{tag}.log").write_text(f"$ {' '.join(full)}\nexit {r.returncode}, "
                                                   f"{time.monotonic() - t:.1f} s\n--- stdout\n{r.stdout}\n"
                                                   f"--- stderr\n{r.stderr}")
        print(f"  {name}{tag}: exit {r.returncode} in {time.monotonic() - t:.1f} s", flush=True)
        why = [ln for ln in r.stderr.splitlines() if ln.startswith("steady_programs: needs")]
        if r.returncode == SKIP or why:
            raise Skipped(why[-1][len("steady_programs: "):] if why else "the program exited 77 (skipped)")
        if r.returncode != 0:
            raise RuntimeError(f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[-600:]}")
        if not clock.exists():
            raise RuntimeError(f"the program wrote no clock file {clock.name}")
        return clock, (Path(f"{trace}.sqlite") if trace_options is not None else None)

    def steady(self, name):
        row = {"program": name, "title": PROGRAMS[name][0]}
        try:
            if name == "cpp" and not self.a.analyze_only and not (Path(self.a.build) / "bin" / "step_loop").exists():
                raise Skipped(f"{self.a.build}/bin/step_loop is not built (cmake --build BUILD --target step_loop)")
            clock_path, db = self.run(name, "", self.command(name), trace_options=[])
            clock = read_clock(clock_path)
            pid = _clock_pid(self.work / f"{name}.log")
            row.update(compare(gpuscope_stats(self.gs, db, pid), clock, self.a.tolerance_pct))
        except Skipped as e:
            row.update(status="skipped", why=str(e))
        except RUN_ERRORS as e:
            row.update(status="fail", why=f"error: {e}")
        return row

    def idle(self, names):
        """Part 2 for `names`: rounds of an untraced and a traced (--pytorch=ops,modules) run, the
        programs in turn within each round, so that a budget that runs out leaves every program about
        as many rounds; the order inside a round alternates (untraced first in rounds 1, 3, ...,
        traced first in 2, 4, ...), so that a machine that drifts through the call does not favour
        one side. Returns one row a program (combine_idle_rounds), with the rounds asked for."""
        rows = {n: {"program": n, "title": PROGRAMS[n][0]} for n in names}
        rounds = {n: [] for n in names}
        for k in range(max(1, self.a.idle_rounds)):
            suffix = "" if k == 0 else f".r{k + 1}"  # round 1 keeps the names of a one-round run
            for name in names:
                if "status" in rows[name]:  # skipped or failed in an earlier round
                    continue
                if k > 0 and not self.a.analyze_only and self.left() < 2 * self.a.min_run_s:
                    continue
                if k > 0 and self.a.analyze_only and not (self.work / f"{name}.untraced{suffix}.clock.jsonl").exists():
                    continue
                try:
                    rounds[name].append(self.idle_round(name, suffix, traced_first=k % 2 == 1))
                except Skipped as e:
                    if not rounds[name]:
                        rows[name].update(status="skipped", why=str(e))
                except RUN_ERRORS as e:
                    rows[name].update(status="fail", why=f"error: {e}")
        for name in names:
            if "status" not in rows[name] and rounds[name]:
                rows[name].update(combine_idle_rounds(rounds[name], self.a.idle_points))
            rows[name]["rounds_asked"] = max(1, self.a.idle_rounds)
        return [rows[n] for n in names]

    def idle_round(self, name, suffix, traced_first):
        """One untraced and one traced run of `name`, compared (compare_idle)."""
        runs = {}
        order = ("opsmod", "untraced") if traced_first else ("untraced", "opsmod")
        for side in order:
            options = ["--pytorch=ops,modules"] if side == "opsmod" else None
            runs[side] = self.run(name, f".{side}{suffix}", self.command(name), trace_options=options)
        pid = _clock_pid(self.work / f"{name}.opsmod{suffix}.log")
        traced_clock, db = runs["opsmod"]
        stats = gpuscope_stats(self.gs, db, pid)
        row = compare_idle(stats, read_clock(runs["untraced"][0]), self.a.idle_points, read_clock(traced_clock))
        row.update(round=int(suffix[2:]) if suffix else 1, traced_first=traced_first,
                   prices=tracer_prices(db, pid, [s["step"] for s in stats["steps"] if s["state"] == "steady"]))
        return row


class Skipped(Exception):
    pass


def _clock_pid(log):
    """The program's pid from its RESULT line (pid=P), to read its own steps only; None if absent."""
    try:
        m = re.search(r"^RESULT .*\bpid=(\d+)", Path(log).read_text(), re.M)
    except OSError:
        return None
    return int(m.group(1)) if m else None


# ---- writing ----------------------------------------------------------------------------------

def _f(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def _cell(text):
    """Text for one markdown table cell: one line, no column bar."""
    return " ".join(str(text).split()).replace("|", "/")


def markdown(rows, idle_rows, a):
    lines = ["# Steady state on a plain `gpuscope trace` vs each program's own clock (issue 39)", "",
             f"Targets: steady iteration within {a.tolerance_pct} % of the program's own median over the same steps, "
             "warm-up steps left out; steady GPU idle within "
             f"{a.idle_points} points of the untraced program's (--pytorch=ops,modules).", "",
             "| program | own median (ms) | gpuscope steady (ms) | error | steps: gpuscope steady / warm-up / all | "
             "own warm-up left out | unit, matched | how steps were found | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] == "skipped" or "err_pct" not in r:
            lines.append(f"| {r['program']} | - | {_f(r.get('gs_median_ms'))} | - | "
                         f"{r.get('gs_steady', '-')} / {r.get('gs_warmup', '-')} / {r.get('gs_steps', '-')} | - | - | "
                         f"{_cell(r.get('judged') or r.get('source') or '-')} | **{r['status']}**: {_cell(r['why'])} |")
            continue
        lines.append(
            f"| {r['program']} | {_f(r['own_median_same_ms'])} | {_f(r['gs_median_ms'])} | {_f(r['err_pct'], '+.2f')} % | "
            f"{r['gs_steady']} / {r['gs_warmup']} / {r['gs_steps']} | "
            f"{'yes' if r['warmup_left_out'] else 'no'} ({r['own_warmup']} own warm-up {r['level']}s; first steady: "
            f"{r['first_steady_own_step']}) | {r['level']}, {r['method']} | {_cell(r['source'])}: {_cell(r['judged'])} | "
            f"**{r['status']}**{': ' + _cell(r['why']) if r['why'] else ''} |")
    if idle_rows:
        lines += ["", "## Steady GPU idle with --pytorch=ops,modules vs the untraced program", "",
                  "| program | traced GPU busy per step (ms) | untraced step (ms) | untraced idle | gpuscope idle | "
                  "difference | traced step: gpuscope / own clock (ms) | gpuscope's figure | result |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in idle_rows:
            if "diff_points" not in r:
                lines.append(f"| {r['program']} | - | - | - | - | - | - | - | **{r['status']}**: {_cell(r['why'])} |")
                continue
            lines.append(f"| {r['program']} | {_f(r['busy_ms'])} | {_f(r['untraced_ms'])} | "
                         f"{_f(r['untraced_idle_pct'], '.1f')} % | {_f(r['gs_idle_pct'], '.1f')} % | "
                         f"{_f(r['diff_points'], '+.1f')} points | {_f(r['traced_step_ms'])} / {_f(r.get('traced_own_ms'))} | "
                         f"{r['idle_phrase']}{_rounds_text(r)} | "
                         f"**{r['status']}**{': ' + _cell(r['why']) if r['why'] else ''} |")
    each = [(r["program"], x) for r in idle_rows for x in r.get("round_rows") or []]
    if each:
        lines += ["", "Each round: what tracing added to the program's own step (traced own clock - untraced) "
                  "beside what the trace prices gpuscope's own cost at per steady step (median counts a step x "
                  "the trace's prices: launches x tracer_launch_cost_ns, other API calls x tracer_api_cost_ns, "
                  "operators x tracer_torch_op_cost_ns, module calls x tracer_torch_module_cost_ns).", "",
                  "| program | round (which ran first) | untraced step (ms) | traced step, own clock (ms) | added (ms) | "
                  "priced (ms) | launches / other calls / operators / modules a step | prices (ns) | "
                  "untraced idle | gpuscope idle | difference |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for name, x in each:
            c, pr = x.get("counts") or {}, x.get("prices_ns") or {}
            counts = " / ".join(_f(c.get(k), "d") for k, _ in PRICE_KEYS) if c else "-"
            prices = " / ".join(_f(pr.get(k), ".0f") for k, _ in PRICE_KEYS) if pr else "-"
            lines.append(f"| {name} | {x.get('round', '-')} ({'traced' if x.get('traced_first') else 'untraced'} first) | "
                         f"{_f(x.get('untraced_ms'))} | {_f(x.get('traced_own_ms'))} | {_f(x.get('added_ms'))} | "
                         f"{_f(x.get('priced_ms'))} | {counts} | {prices} | {_f(x.get('untraced_idle_pct'), '.1f')} % | "
                         f"{_f(x.get('gs_idle_pct'), '.1f')} % | {_f(x.get('diff_points'), '+.1f')} |")
    lines += ["", "Own median: the program's clock (synchronize, then time.perf_counter / steady_clock; a step from "
              "the end of the previous one) over the steps gpuscope calls steady. gpuscope steady: the median wall "
              "time of step_sum's steady steps. Own warm-up: the program's first steps while over 1.25 x the "
              "median of its steps after the first."]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--out", required=True)
    p.add_argument("--programs", default=",".join(PROGRAMS), help=f"default: {','.join(PROGRAMS)}")
    p.add_argument("--no-idle", action="store_true", help="leave out part 2 (steady GPU idle, resnet18/transformer)")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--tolerance-pct", type=float, default=5.0)
    p.add_argument("--idle-points", type=float, default=5.0)
    p.add_argument("--idle-rounds", type=int, default=3,
                   help="part 2: rounds of an untraced and a traced run, alternating; medians (default 3)")
    p.add_argument("--timeout", type=int, default=120, help="seconds for one run (default 120)")
    p.add_argument("--budget-s", type=float, default=290, help="start no run past this many seconds (default 290)")
    p.add_argument("--min-run-s", type=float, default=25, help="start a run only with this much budget left")
    p.add_argument("--steps", action="append", default=[], metavar="NAME=N", help="steps of one program")
    p.add_argument("--allow-skip", action="store_true", help="exit 0 when rows are skipped and none failed")
    p.add_argument("--analyze-only", action="store_true", help="read OUT/steady_work as an earlier run left it")
    a = p.parse_args()
    names = [n.strip() for n in a.programs.split(",") if n.strip()]
    bad = [n for n in names if n not in PROGRAMS]
    if bad:
        print(f"steady_check: unknown program(s) {', '.join(bad)} (known: {', '.join(PROGRAMS)})", file=sys.stderr)
        return 2
    try:
        a.steps = {k: int(v) for k, v in (s.split("=", 1) for s in a.steps)}
    except ValueError:
        print("steady_check: --steps takes NAME=N", file=sys.stderr)
        return 2
    gs = Path(a.build) / "bin" / "gpuscope"
    if not os.access(gs, os.X_OK):
        print(f"steady_check: no gpuscope binary at {gs} (build it, or --build the bundle)", file=sys.stderr)
        return 2
    runner = Runner(a)
    rows, idle_rows = [], []
    for n in names:
        print(f"steady: {n}", flush=True)
        rows.append(runner.steady(n))
    if not a.no_idle:
        idle_names = [x for x in names if x in IDLE_PROGRAMS]
        if idle_names:
            print(f"idle: {', '.join(idle_names)}, {max(1, a.idle_rounds)} round(s)", flush=True)
            idle_rows = runner.idle(idle_names)
    text = markdown(rows, idle_rows, a)
    out = Path(a.out)
    (out / "steady_check.md").write_text(text)
    (out / "steady_check.json").write_text(json.dumps({"tolerance_pct": a.tolerance_pct, "idle_points": a.idle_points,
                                                       "steady": rows, "idle": idle_rows}, indent=1))
    print(text)
    all_rows = rows + idle_rows
    failed = [r["program"] for r in all_rows if r["status"] == "fail"]
    skipped = [r["program"] for r in all_rows if r["status"] == "skipped"]
    print(f"steady_check: {sum(r['status'] == 'pass' for r in all_rows)} passed, {len(failed)} failed"
          f"{' (' + ', '.join(failed) + ')' if failed else ''}, {len(skipped)} skipped"
          f"{' (' + ', '.join(skipped) + ')' if skipped else ''}")
    return 1 if failed or (skipped and not a.allow_skip) else 0


if __name__ == "__main__":
    sys.exit(main())
