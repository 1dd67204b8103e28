#!/usr/bin/env python3
"""Cost of --gpu-metrics and --cuda-memory-usage measured inside one traced process.

On the GPU machine the same untraced program runs up to 2x slower from one process to the
next (docs/performance.md), so a cost of a few percent cannot be told from separate runs.
Here one traced resnet18 run (examples/pytorch/resnet_train.py, each step an NVTX range
"step N") has the option switched on and off by the clock: with
GPUSCOPE_GPU_METRICS_DUTY_MS=P the launcher's sampler samples while floor(t / P) is even and
pauses while it is odd; with GPUSCOPE_MEMORY_DUTY_MS=P the collector records allocations in
the even periods only. Steps lying wholly inside an "on" period (at least --guard-ms from an
edge) are compared with steps wholly inside an "off" period of the same process: cost =
median(on) / median(off) - 1. For --gpu-metrics the trace itself shows which steps were
sampled (samples overlapping the step), so the split is checked, not assumed.

Usage: duty_cost.py --build BUILD --out OUT [--runs 3] [--steps 1500] [--period-ms 1000]
Writes OUT.md and OUT.json.
"""
import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def steps_of(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT e.start_ns, e.end_ns, s.value FROM nvtx_events e JOIN strings s ON s.id = e.text_id "
                       "WHERE s.value LIKE 'step %' AND e.end_ns IS NOT NULL ORDER BY e.start_ns").fetchall()
    sampled, allocs = None, None
    try:
        allocs = [r[0] for r in con.execute("SELECT ts_ns FROM memory_events WHERE operation IN ('alloc', 'free')")]
    except sqlite3.Error:
        pass
    try:
        sampled = [r[0] for r in con.execute("SELECT DISTINCT start_ns FROM gpu_metrics ORDER BY start_ns")]
    except sqlite3.Error:
        pass
    con.close()
    return [(s, e, int(n.split()[1])) for s, e, n in rows], sampled, allocs


def split(steps, period_ns, guard_ns, skip):
    on, off = [], []
    for s, e, i in steps:
        if i < skip:
            continue
        ps, pe = s // period_ns, e // period_ns
        if ps != pe or s - ps * period_ns < guard_ns or (ps + 1) * period_ns - e < guard_ns:
            continue
        (on if ps % 2 == 0 else off).append((s, e))
    return on, off


def covered(spans, starts):
    """How many of spans have at least one sample starting inside them."""
    import bisect
    n = 0
    for s, e in spans:
        i = bisect.bisect_left(starts, s)
        if i < len(starts) and starts[i] < e:
            n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--period-ms", type=int, default=1000)
    ap.add_argument("--guard-ms", type=int, default=250)
    ap.add_argument("--skip", type=int, default=30, help="first steps left out (warm-up)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--timeout", type=int, default=150)
    a = ap.parse_args()
    gs = Path(a.build).resolve() / "bin" / "gpuscope"
    out = Path(a.out)
    work = out.parent / (out.name + "_work")
    work.mkdir(parents=True, exist_ok=True)
    modes = {
        "--gpu-metrics": ("GPUSCOPE_GPU_METRICS_DUTY_MS", ["--gpu-metrics"]),
        "--cuda-memory-usage": ("GPUSCOPE_MEMORY_DUTY_MS", ["--cuda-memory-usage"]),
    }
    period, guard = a.period_ms * 1_000_000, a.guard_ms * 1_000_000
    results = []
    for r in range(a.runs):
        for mode, (var, opts) in modes.items():
            db = work / f"duty-{mode.strip('-')}-{r}"
            env = dict(__import__("os").environ, **{var: str(a.period_ms)})
            cmd = [str(gs), "trace", "-o", str(db), "-f", "-q", "--calibrate", "never", *opts, "--", a.python,
                   str(REPO / "examples/pytorch/resnet_train.py"), "--steps", str(a.steps)]
            print("$", " ".join(cmd), f"({var}={a.period_ms})", flush=True)
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
            if p.returncode != 0:
                print(p.stderr[-2000:])
                results.append({"mode": mode, "run": r, "error": p.stderr[-500:]})
                continue
            steps, sampled, allocs = steps_of(f"{db}.sqlite")
            on, off = split(steps, period, guard, a.skip)
            res = {"mode": mode, "run": r, "steps": len(steps)}
            if mode == "--gpu-metrics" and sampled is not None:
                # The trace says which steps were sampled: compare those in "on" periods that
                # were with those in "off" periods that were not.
                res["on_steps_sampled"] = covered(on, sampled)
                res["off_steps_sampled"] = covered(off, sampled)
                on = [st for st in on if covered([st], sampled)]
                off = [st for st in off if not covered([st], sampled)]
            res.update(on=len(on), off=len(off))
            if mode == "--cuda-memory-usage" and allocs is not None:
                warm = next((st for st, _, i in steps if i == a.skip), None)
                # Allocations and frees recorded after the warm-up (only in "on" periods: the
                # records are off in the others, so this is a lower bound there).
                res["allocs_after_warmup"] = sum(1 for t in allocs if warm is not None and t >= warm)
            if on and off:
                mon = statistics.median(e - s for s, e in on) / 1e6
                moff = statistics.median(e - s for s, e in off) / 1e6
                res.update(on_ms=mon, off_ms=moff, cost_pct=100 * (mon / moff - 1))
                # Paired by period: each "on" period's median step against the mean of the
                # "off" periods on either side, so a drift slower than a period cancels.
                per = {}
                for st, en in on + off:
                    per.setdefault(st // period, []).append(en - st)
                med = {k: statistics.median(v) for k, v in per.items() if len(v) >= 3}
                pairs = [med[k] / ((med[k - 1] + med[k + 1]) / 2) - 1 for k in med
                         if k % 2 == 0 and k - 1 in med and k + 1 in med]
                if pairs:
                    res["paired_cost_pct"] = 100 * statistics.median(pairs)
                    res["pairs"] = len(pairs)
            print(f"  {res}", flush=True)
            results.append(res)
            Path(f"{db}.sqlite").unlink(missing_ok=True)
    lines = ["# Cost of --gpu-metrics and --cuda-memory-usage inside one traced process (resnet18 steps)", "",
             f"Each run: {a.steps} steps of examples/pytorch/resnet_train.py under gpuscope trace with the option "
             f"switched on and off every {a.period_ms} ms (on in even periods); steps within {a.guard_ms} ms of a "
             f"switch and the first {a.skip} are left out. Cost = median step on / median step off - 1.", "",
             "| option | run | steps on | steps off | median on (ms) | median off (ms) | cost | paired by period | check |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for res in results:
        if "error" in res:
            lines.append(f"| {res['mode']} | {res['run']} | | | | | | failed: {res['error'][-120:]} |")
            continue
        check = ""
        if "allocs_after_warmup" in res:
            check = f"{res['allocs_after_warmup']} allocations/frees recorded after step {a.skip}"
        if "on_steps_sampled" in res:
            check = f"{res['on_steps_sampled']} steps of on periods sampled, {res['off_steps_sampled']} of off " \
                    f"periods sampled (compared: sampled on-steps, unsampled off-steps)"
        paired = f"{res['paired_cost_pct']:+.2f} % ({res['pairs']} periods)" if "paired_cost_pct" in res else ""
        lines.append(f"| {res['mode']} | {res['run']} | {res['on']} | {res['off']} | {res.get('on_ms', 0):.3f} | "
                     f"{res.get('off_ms', 0):.3f} | {res.get('cost_pct', float('nan')):+.2f} % | {paired} | {check} |")
    for mode in modes:
        costs = [res["cost_pct"] for res in results if res["mode"] == mode and "cost_pct" in res]
        paired = [res["paired_cost_pct"] for res in results if res["mode"] == mode and "paired_cost_pct" in res]
        if costs:
            lines.append(f"\n{mode}: median cost over {len(costs)} runs {statistics.median(costs):+.2f} % "
                         f"(runs: {', '.join(f'{c:+.2f} %' for c in costs)})" +
                         (f"; paired by period {statistics.median(paired):+.2f} % "
                          f"(runs: {', '.join(f'{c:+.2f} %' for c in paired)})" if paired else ""))
    Path(f"{out}.md").write_text("\n".join(lines) + "\n")
    Path(f"{out}.json").write_text(json.dumps(results, indent=1))
    print("\n".join(lines))
    return 0 if all("cost_pct" in res for res in results) else 1


if __name__ == "__main__":
    sys.exit(main())
