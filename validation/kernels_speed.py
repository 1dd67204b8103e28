#!/usr/bin/env python3
"""The `kernels_speed` step of scripts/gpu-run: the time `gpuscope kernels` adds per profiled
launch against Nsight Compute (ncu) on a foreign PyTorch program (issue 16's speed target),
written to OUT/kernels_speed.md and OUT/kernels_speed.json, raw logs in OUT/kernels_speed_work/.

Two methods. Both judge the ratio ncu / gpuscope of the time added per profiled launch:
  quick, kernel replay         >= 5
  quick, --replay-mode none    >= 10   (against ncu quick, which always replays)
  detailed                     >= 3

--method step (the default): a steady-state measurement inside each process. The program is
examples/pytorch/resnet_train.py --steps 7 --warmup 2 --print-steps (torchvision resnet18, random
weights, nothing downloaded; each step is an NVTX push/pop range "step i" and ends synchronized;
--print-steps prints every step's wall time). Every profiled launch lies inside step P
(--profile-step, default 3):
  untraced                 python resnet_train.py ...
  gpuscope quick           gpuscope kernels --set quick --nvtx-include "step 3" --launch-count N  (kernel replay)
  gpuscope quick none      the same with --replay-mode none
  ncu quick                ncu --metrics <quick set> FLAGS --nvtx --nvtx-include "step 3/" --launch-count N
  gpuscope / ncu detailed  the same with --set detailed (only with --sets quick,detailed)
("step 3/" is ncu's syntax for a push/pop range of the default domain; gpuscope's --nvtx-include
takes the range name.) Per run, the time the profiling added inside the process =
t(step P) - median(t of the other warm steps: steps warmup..steps-1 except P). That baseline
cancels the process's start-up noise (importing torch, cuDNN initialisation: seconds from run to
run) and the tool's cost on unprofiled launches, which every step pays alike. Each profiling
configuration runs with N = --launches-small (10) and N = --launches (60), all configurations
alternating within a round (the untraced run too: it reports the untraced step time and checks
that step P is no slower than the others untraced), --rounds rounds (default 3), medians per
configuration. Time added per profiled launch (judged) = (added(60) - added(10)) / (60 - 10),
with the launches actually profiled (gpuscope: rows of NAME.sqlite's kernel_profiles; ncu: the
launches of its CSV): the difference removes each tool's one-time first-launch setup (profiler
initialisation, configuration image). added(60) / 60 ("including first-launch setup") is
reported beside it. A run that profiled another number of launches than asked, or whose step P
is not the slowest warm step by a margin (the spread of the other warm steps, at least 2 ms: the
profiling landed elsewhere), marks its comparison incomplete, and it fails.
The default set is quick: ncu --set detailed at 60 launches takes about 50 s a run, so
`--sets quick,detailed` fits fewer rounds in one device call (pass --rounds 1 or 2 there).

--method process (the earlier method, kept for comparison): whole-process wall times of
resnet_train.py --steps 2 --warmup 1, one process per configuration and round (default 2
rounds), with in addition a run per tool whose kernel filter matches nothing (the tool's fixed
cost): time added per profiled launch = (T(60 launches) - T(no launch matched)) / launches
profiled, time added = T - T(untraced). resnet18's process varies by up to 2.5 s from run to run
while 60 launches add 1-5 s, so these per-launch figures swing by 10x between calls
(docs/performance.md); --replay-mode none is measured against the quick (kernel replay) no-match
run. Default sets: quick,detailed.

FLAGS are kernels_check.py's (--csv --print-units base --clock-control none --cache-control C
--print-kernel-base function): gpuscope never locks clocks; C, kernels_check.py's cache control
(or --cache-control), goes to gpuscope's kernel-replay runs too where `gpuscope kernels --help`
lists the option (--replay-mode none replays nothing, so flushes nothing). The quick set's
metric list is asked of gpuscope itself (`gpuscope kernels --list-sets --format json`), else
kernels_check.QUICK. --budget-s starts no round that would end past that many seconds (saying so).

Exit status: 0 when every target is met per launch, 1 otherwise or when a run failed, 77 when
ncu, torch, torchvision or a CUDA device is missing (skipped, with a message), 2 on bad usage.
Usage:
  kernels_speed.py --build BUILD --out OUT [--method step|process] [--rounds N] [--launches 60]
                   [--launches-small 10] [--steps 7] [--warmup 2] [--profile-step 3] [--timeout S]
                   [--ncu PATH] [--python PY] [--sets quick,detailed] [--budget-s S]
                   [--cache-control all|none]
The arithmetic (summarize, summarize_steps) is unit-tested without a GPU, and the whole script
(both methods) against fake gpuscope / ncu / python programs, by
tests/unit/validation/test_kernels_speed.py.
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ next to the validation scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels_check as kc  # noqa: E402  (ncu flags, CSV parsing, gpuscope database reading, tables)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "examples", "pytorch", "resnet_train.py")
PROGRAM_ARGS = ["--steps", "2", "--warmup", "1"]
NO_MATCH = "^no_such_kernel$"
SKIP = 77
# name -> (tool, set, replay mode, profiles something): the order is the order within a round.
CONFIGS = {
    "untraced": (None, None, None, False),
    "gpuscope_quick": ("gpuscope", "quick", "kernel", True),
    "ncu_quick": ("ncu", "quick", None, True),
    "gpuscope_quick_none": ("gpuscope", "quick", "none", True),
    "gpuscope_quick_0": ("gpuscope", "quick", "kernel", False),
    "ncu_quick_0": ("ncu", "quick", None, False),
    "gpuscope_detailed": ("gpuscope", "detailed", "kernel", True),
    "ncu_detailed": ("ncu", "detailed", None, True),
    "gpuscope_detailed_0": ("gpuscope", "detailed", "kernel", False),
    "ncu_detailed_0": ("ncu", "detailed", None, False),
}
LABELS = {
    "untraced": "untraced",
    "gpuscope_quick": "`gpuscope kernels --set quick --launch-count {n}` (kernel replay)",
    "ncu_quick": "`ncu --metrics <quick> --launch-count {n}`",
    "gpuscope_quick_none": "`gpuscope kernels --set quick --launch-count {n} --replay-mode none`",
    "gpuscope_quick_0": "`gpuscope kernels --set quick -k '^no_such_kernel$'` (fixed cost)",
    "ncu_quick_0": "`ncu --metrics <quick> --kernel-name regex:^no_such_kernel$` (fixed cost)",
    "gpuscope_detailed": "`gpuscope kernels --set detailed --launch-count {n}`",
    "ncu_detailed": "`ncu --set detailed --launch-count {n}`",
    "gpuscope_detailed_0": "`gpuscope kernels --set detailed -k '^no_such_kernel$'` (fixed cost)",
    "ncu_detailed_0": "`ncu --set detailed --kernel-name regex:^no_such_kernel$` (fixed cost)",
}
# (name, ncu run, ncu fixed-cost run, gpuscope run, gpuscope fixed-cost run, target ncu / gpuscope)
COMPARISONS = [
    ("quick, kernel replay", "ncu_quick", "ncu_quick_0", "gpuscope_quick", "gpuscope_quick_0", 5.0),
    ("quick, --replay-mode none", "ncu_quick", "ncu_quick_0", "gpuscope_quick_none", "gpuscope_quick_0", 10.0),
    ("detailed", "ncu_detailed", "ncu_detailed_0", "gpuscope_detailed", "gpuscope_detailed_0", 3.0),
]
PROBE = r'''
import sys
try:
    import torch
except Exception as e:
    print("torch is not importable: %s" % e); sys.exit(3)
try:
    import torchvision
except Exception as e:
    print("torchvision is not importable: %s" % e); sys.exit(4)
print("torch %s, torchvision %s, CUDA device: %s" % (torch.__version__, torchvision.__version__,
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"))
sys.exit(0 if torch.cuda.is_available() else 5)
'''


# ---- pure functions (unit-tested) -----------------------------------------------------------

def ratio(ncu, gs):
    """ncu / gpuscope of two added times (s): inf when gpuscope added nothing measurable
    (<= 0, within noise) and ncu did; None when ncu's is missing or <= 0 too."""
    if ncu is None or gs is None or ncu <= 0:
        return None
    return float("inf") if gs <= 0 else ncu / gs


def summarize(walls, counts, launches, configs=None):
    """walls: {config: [wall s or None (failed run), ...]} per round; counts: {config: [launches
    profiled per successful round]}; launches: the --launch-count asked for. Returns
    {'runs': {config: {median_s, walls, added_s, profiled, expected, complete, per_launch_s,
    failed}}, 'comparisons': [{name, ..., ratio_per_launch, ratio_total, target, result,
    result_total, complete}], 'ok': every comparison's per-launch result PASS}."""
    configs = [c for c in (configs or CONFIGS) if c in walls]
    runs = {}
    for c in configs:
        ok = [w for w in walls[c] if w is not None]
        profiles = CONFIGS[c][3]
        expected = launches if profiles else 0
        got = counts.get(c, [])
        runs[c] = {"median_s": statistics.median(ok) if ok else None, "walls": list(walls[c]),
                   "failed": sum(w is None for w in walls[c]), "profiled": got,
                   "expected": None if c == "untraced" else expected,
                   "complete": c == "untraced" or (bool(got) and all(n == expected for n in got)
                                                   and len(got) == len(ok) and len(ok) == len(walls[c]))}
    base = runs.get("untraced", {}).get("median_s")
    for c, r in runs.items():
        r["added_s"] = None if base is None or r["median_s"] is None or c == "untraced" else r["median_s"] - base
        r["per_launch_s"] = None
    comps = []
    for name, ncu, ncu0, gs, gs0, target in COMPARISONS:
        if not all(k in runs for k in (ncu, ncu0, gs, gs0)):
            continue
        for run, fixed in ((ncu, ncu0), (gs, gs0)):
            r, f = runs[run], runs[fixed]
            n = statistics.median(r["profiled"]) if r["profiled"] else 0
            if r["median_s"] is not None and f["median_s"] is not None and n > 0:
                r["per_launch_s"] = (r["median_s"] - f["median_s"]) / n
        complete = all(runs[k]["complete"] for k in ("untraced", ncu, ncu0, gs, gs0) if k in runs)
        rp = ratio(runs[ncu]["per_launch_s"], runs[gs]["per_launch_s"])
        rt = ratio(runs[ncu]["added_s"], runs[gs]["added_s"])

        def verdict(x):
            if x is None:
                return "FAIL (not measured)"
            if not complete:
                return "FAIL (incomplete)"
            return "PASS" if x >= target else "FAIL"
        comps.append({"name": name, "ncu": ncu, "ncu_fixed": ncu0, "gpuscope": gs, "gpuscope_fixed": gs0,
                      "ncu_per_launch_s": runs[ncu]["per_launch_s"], "gpuscope_per_launch_s": runs[gs]["per_launch_s"],
                      "ncu_added_s": runs[ncu]["added_s"], "gpuscope_added_s": runs[gs]["added_s"],
                      "ratio_per_launch": rp, "ratio_total": rt, "target": target, "complete": complete,
                      "result": verdict(rp), "result_total": verdict(rt)})
    return {"runs": runs, "comparisons": comps, "ok": bool(comps) and all(c["result"] == "PASS" for c in comps)}


def finite(obj):
    """obj with every infinite float written as the string 'inf' (JSON has no infinity)."""
    if isinstance(obj, float) and obj in (float("inf"), float("-inf")):
        return str(obj)
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def fmt_s(x):
    return "—" if x is None else f"{x:+.2f} s" if x < 0 else f"{x:.2f} s"


def fmt_ms(x, digits=1):
    return "—" if x is None else f"{x * 1e3:.{digits}f} ms"


def fmt_ratio(x):
    return "—" if x is None else ("∞ (gpuscope within noise)" if x == float("inf") else f"{x:.1f}×")


def report_markdown(summary, settings):
    """The report (markdown): settings, one row per run, one row per comparison."""
    s = settings
    md = ["# gpuscope kernels vs ncu: time added per profiled launch (resnet18)\n\n"]
    md.append(f"Program: `{' '.join(s['program'])}` (torchvision resnet18, random weights, CUDA); "
              f"{s['launches']} launches profiled (the first ones), {s['rounds_done']} round(s) of every "
              f"configuration, alternating within a round, medians of wall time. Device: {s['device']}. "
              f"gpuscope: {s.get('gpuscope_version', 'unknown')}. ncu: `{s['ncu']}` ({s.get('ncu_version', 'unknown')}) "
              f"with kernels_check.py's flags `{' '.join(s['ncu_flags'])}` (no clock locking: gpuscope never "
              f"locks clocks). Cache control: {s.get('cache_text', '—')}. "
              f"Quick set ({s['quick_source']}): {', '.join(s['quick_metrics'])}.\n\n")
    md.append("Time added per profiled launch = (T(N launches) − T(no launch matched)) / launches profiled; "
              "time added = T − T(untraced).\n\n")
    rows = []
    for c, r in summary["runs"].items():
        label = LABELS[c].format(n=s["launches"])
        walls = ", ".join("failed" if w is None else f"{w:.2f}" for w in r["walls"])
        profiled = "—" if c == "untraced" else ", ".join(str(n) for n in r["profiled"]) or "none"
        if c != "untraced" and not r["complete"]:
            profiled += f" (expected {r['expected']}: INCOMPLETE)"
        rows.append((label, fmt_s(r["median_s"]), walls, fmt_s(r["added_s"]), profiled, fmt_ms(r["per_launch_s"])))
    md.append(kc.markdown_table(["run", "wall (median)", "walls (s)", "added over untraced", "launches profiled",
                                 "added per profiled launch"], rows))
    md.append("\n")
    rows = [(c["name"], fmt_ms(c["ncu_per_launch_s"]), fmt_ms(c["gpuscope_per_launch_s"]),
             fmt_ratio(c["ratio_per_launch"]), f"≥ {c['target']:g}×", c["result"],
             f"{fmt_s(c['ncu_added_s'])} / {fmt_s(c['gpuscope_added_s'])}", fmt_ratio(c["ratio_total"]),
             c["result_total"]) for c in summary["comparisons"]]
    md.append(kc.markdown_table(["comparison", "ncu per launch", "gpuscope per launch", "ncu / gpuscope per launch",
                                 "target", "result (judged)", "added: ncu / gpuscope", "ncu / gpuscope total",
                                 "result (total)"], rows))
    if s["notes"]:
        md.append("\nNotes:\n\n" + "".join(f"- {n}\n" for n in s["notes"]))
    md.append(f"\nOverall (per-launch targets): {'PASS' if summary['ok'] and not s['run_failures'] else 'FAIL'}. "
              "Raw logs: kernels_speed_work/.\n")
    return "".join(md)


# ---- the step method: pure functions (unit-tested) ----------------------------------------------

STEP_LINE = re.compile(r"^STEP (\d+) ms=([0-9.]+)\s*$", re.M)
MIN_MARGIN_S = 0.002  # step P must exceed the slowest other warm step by the others' spread, at least this
# name -> (tool, set, replay mode): the order is the order within a round (each at N = large, then all at small).
STEP_CONFIGS = {
    "gpuscope_quick": ("gpuscope", "quick", "kernel"),
    "ncu_quick": ("ncu", "quick", None),
    "gpuscope_quick_none": ("gpuscope", "quick", "none"),
    "gpuscope_detailed": ("gpuscope", "detailed", "kernel"),
    "ncu_detailed": ("ncu", "detailed", None),
}
STEP_LABELS = {
    "untraced": "untraced",
    "gpuscope_quick": "`gpuscope kernels --set quick` (kernel replay)",
    "ncu_quick": "`ncu --metrics <quick>`",
    "gpuscope_quick_none": "`gpuscope kernels --set quick --replay-mode none`",
    "gpuscope_detailed": "`gpuscope kernels --set detailed`",
    "ncu_detailed": "`ncu --set detailed`",
}
# (name, ncu config, gpuscope config, target ncu / gpuscope per launch)
STEP_COMPARISONS = [
    ("quick, kernel replay", "ncu_quick", "gpuscope_quick", 5.0),
    ("quick, --replay-mode none", "ncu_quick", "gpuscope_quick_none", 10.0),
    ("detailed", "ncu_detailed", "gpuscope_detailed", 3.0),
]


def run_key(config, n=None):
    """'untraced', or 'CONFIG@N' for a profiling configuration at N launches."""
    return "untraced" if config == "untraced" else f"{config}@{n}"


def parse_steps(text, steps):
    """resnet_train.py --print-steps output (tool output mixed in) -> [step seconds] for steps
    0..steps-1, or None when any step's line is missing."""
    got = {int(m.group(1)): float(m.group(2)) / 1e3 for m in STEP_LINE.finditer(text or "")}
    return [got[i] for i in range(steps)] if all(i in got for i in range(steps)) else None


def step_added(steps_s, warmup, p):
    """The time profiling added inside one process: {step_p_s, baseline_s (median of the warm
    steps warmup..end other than p), added_s = step_p_s - baseline_s, others_min_s,
    others_max_s, spread_s (max - min of those), margin_s = max(spread_s, MIN_MARGIN_S),
    slowest: step p exceeds the slowest other warm step by margin_s (where a profiled run's
    launches must have landed), within_spread: |added_s| <= margin_s (an untraced run's step p
    is an ordinary step)}. Seconds."""
    others = [t for i, t in enumerate(steps_s) if i >= warmup and i != p]
    base = statistics.median(others)
    lo, hi = min(others), max(others)
    margin = max(hi - lo, MIN_MARGIN_S)
    added = steps_s[p] - base
    return {"step_p_s": steps_s[p], "baseline_s": base, "added_s": added, "others_min_s": lo, "others_max_s": hi,
            "spread_s": hi - lo, "margin_s": margin, "slowest": steps_s[p] > hi + margin,
            "within_spread": abs(added) <= margin}


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize_steps(records, small, large, warmup, p, configs=None):
    """records: {run_key: [{'round', 'steps_s': [s per step] or None (the run failed),
    'profiled': launches profiled or None, 'note'?}, ...]} with keys 'untraced' and
    'CONFIG@small' / 'CONFIG@large' for the configs of STEP_CONFIGS (configs: which; default those
    with records). Returns {'runs': {run_key: {config, launches, records (each with step_added's
    figures), median_step_p_s, median_baseline_s, median_added_s, profiled, failed, complete,
    problems, per_launch_incl_setup_s}}, 'configs': {config: {added_small_s, added_large_s,
    launches_small, launches_large, per_launch_s ((added(large) - added(small)) / (launches
    profiled large - small), the judged figure), per_launch_incl_setup_s (added(large) / launches
    large), complete}}, 'comparisons': [{name, ncu, gpuscope, ncu_per_launch_s,
    gpuscope_per_launch_s, ratio_per_launch, ncu_per_launch_incl_setup_s,
    gpuscope_per_launch_incl_setup_s, ratio_incl_setup, target, complete, result,
    result_incl_setup}], 'ok': every comparison's judged result PASS}. Seconds."""
    configs = [c for c in (configs or STEP_CONFIGS) if run_key(c, large) in records or run_key(c, small) in records]
    keys = (["untraced"] if "untraced" in records else []) + \
        [run_key(c, n) for c in configs for n in (large, small)]
    runs = {}
    for key in keys:
        config, n = (key, None) if key == "untraced" else (key.split("@")[0], int(key.split("@")[1]))
        recs, problems = [], []
        for rec in records.get(key, []):
            rec = dict(rec)
            if rec.get("steps_s") is None:
                problems.append(f"round {rec.get('round')}: the run failed{': ' + rec['note'] if rec.get('note') else ''}")
            else:
                rec.update(step_added(rec["steps_s"], warmup, p))
                ms = f"step {p} {rec['step_p_s'] * 1e3:.1f} ms, other warm steps {rec['others_min_s'] * 1e3:.1f}–" \
                     f"{rec['others_max_s'] * 1e3:.1f} ms"
                if n is not None and rec.get("profiled") != n:
                    problems.append(f"round {rec.get('round')}: {rec.get('profiled')} launches profiled, expected {n}")
                if n is not None and not rec["slowest"]:
                    problems.append(f"round {rec.get('round')}: {ms}: step {p} is not the slowest warm step by "
                                    f"{rec['margin_s'] * 1e3:.1f} ms (the others' spread, at least "
                                    f"{MIN_MARGIN_S * 1e3:g} ms): the profiling landed elsewhere")
                if n is None and not rec["within_spread"]:
                    problems.append(f"round {rec.get('round')}: untraced {ms}: step {p} is outside the others' "
                                    f"spread ({rec['margin_s'] * 1e3:.1f} ms) of their median")
            recs.append(rec)
        ok = [r for r in recs if r.get("steps_s") is not None]
        profiled = [r.get("profiled") for r in ok if r.get("profiled") is not None]
        run = {"config": config, "launches": n, "records": recs, "failed": len(recs) - len(ok),
               "median_step_p_s": _median(r["step_p_s"] for r in ok),
               "median_baseline_s": _median(r["baseline_s"] for r in ok),
               "median_added_s": _median(r["added_s"] for r in ok),
               "median_spread_s": _median(r["spread_s"] for r in ok),
               "profiled": profiled, "problems": problems,
               # untraced: its baseline check only warns (it is not part of the judged figure)
               "complete": bool(ok) and len(ok) == len(recs) and (n is None or not problems)}
        nmed = _median(profiled)
        run["per_launch_incl_setup_s"] = (run["median_added_s"] / nmed if n is not None and nmed
                                          and run["median_added_s"] is not None else None)
        runs[key] = run
    per_config = {}
    for c in configs:
        lg, sm = runs.get(run_key(c, large)), runs.get(run_key(c, small))
        nl = _median(lg["profiled"]) if lg else None
        ns = _median(sm["profiled"]) if sm else None
        al = lg["median_added_s"] if lg else None
        as_ = sm["median_added_s"] if sm else None
        marginal = (al - as_) / (nl - ns) if None not in (al, as_, nl, ns) and nl > ns else None
        per_config[c] = {"added_small_s": as_, "added_large_s": al, "launches_small": ns, "launches_large": nl,
                         "per_launch_s": marginal, "per_launch_incl_setup_s": lg["per_launch_incl_setup_s"] if lg else None,
                         "complete": bool(lg and sm and lg["complete"] and sm["complete"])}
    comps = []
    for name, ncu, gs, target in STEP_COMPARISONS:
        if ncu not in per_config or gs not in per_config:
            continue
        complete = per_config[ncu]["complete"] and per_config[gs]["complete"]
        rp = ratio(per_config[ncu]["per_launch_s"], per_config[gs]["per_launch_s"])
        ri = ratio(per_config[ncu]["per_launch_incl_setup_s"], per_config[gs]["per_launch_incl_setup_s"])

        def verdict(x):  # incomplete first: profiling outside step P also leaves nothing to measure
            if not complete:
                return "FAIL (incomplete)"
            if x is None:
                return "FAIL (not measured)"
            return "PASS" if x >= target else "FAIL"
        comps.append({"name": name, "ncu": ncu, "gpuscope": gs, "target": target, "complete": complete,
                      "ncu_per_launch_s": per_config[ncu]["per_launch_s"],
                      "gpuscope_per_launch_s": per_config[gs]["per_launch_s"], "ratio_per_launch": rp,
                      "ncu_per_launch_incl_setup_s": per_config[ncu]["per_launch_incl_setup_s"],
                      "gpuscope_per_launch_incl_setup_s": per_config[gs]["per_launch_incl_setup_s"],
                      "ratio_incl_setup": ri, "result": verdict(rp), "result_incl_setup": verdict(ri)})
    return {"runs": runs, "configs": per_config, "comparisons": comps,
            "ok": bool(comps) and all(c["result"] == "PASS" for c in comps)}


def report_steps_markdown(summary, settings):
    """The step method's report (markdown): settings, one row per run configuration, one row per
    comparison, the notes."""
    s, p = settings, settings["profile_step"]
    md = ["# gpuscope kernels vs ncu: time added per profiled launch (resnet18, in-process step method)\n\n"]
    md.append(f"Program: `{' '.join(s['program'])}` (torchvision resnet18, random weights, CUDA; every step an NVTX "
              f"range `step i`, synchronized at its end). The profiled launches are the first N launches inside step "
              f"{p}: gpuscope `{' '.join(s['gpuscope_filter'])}`, ncu `{' '.join(s['ncu_filter'])}`; "
              f"N = {s['launches_small']} and {s['launches']}. {s['rounds_done']} round(s) of every configuration, "
              f"alternating within a round; medians. Device: {s['device']}. gpuscope: {s.get('gpuscope_version', 'unknown')}. "
              f"ncu: `{s['ncu']}` ({s.get('ncu_version', 'unknown')}) with kernels_check.py's flags "
              f"`{' '.join(s['ncu_flags'])}` (no clock locking: gpuscope never locks clocks). Cache control: "
              f"{s.get('cache_text', '—')}. Quick set ({s['quick_source']}): {', '.join(s['quick_metrics'])}.\n\n")
    md.append(f"Per run: added = t(step {p}) − median(t of warm steps {s['warmup']}..{s['steps'] - 1} other than {p}) "
              f"(in-process baseline: process start-up and the tool's cost on unprofiled launches cancel). "
              f"Per launch (judged) = (added({s['launches']}) − added({s['launches_small']})) / launches profiled "
              f"between them, which removes each tool's one-time first-launch setup; per launch including "
              f"first-launch setup = added({s['launches']}) / {s['launches']}.\n\n")
    rows = []
    for key, r in summary["runs"].items():
        label = STEP_LABELS[r["config"]] + ("" if r["launches"] is None else f", N = {r['launches']}")
        profiled = "—" if r["launches"] is None else ", ".join(str(n) for n in r["profiled"]) or "none"
        if r["launches"] is None:
            check = f"baseline spread {fmt_ms(r['median_spread_s'])}; " + \
                ("ok" if not r["problems"] else f"{len(r['problems'])} outside (see notes)")
        else:
            check = "ok" if r["complete"] else "INCOMPLETE (see notes)"
        per_launch = "—"
        if r["launches"] is not None and r["launches"] == s["launches"]:
            per_launch = fmt_ms(summary["configs"][r["config"]]["per_launch_s"], 2)
        rows.append((label, fmt_ms(r["median_step_p_s"]), fmt_ms(r["median_baseline_s"]), fmt_ms(r["median_added_s"]),
                     profiled, fmt_ms(r["per_launch_incl_setup_s"], 2), per_launch, check))
    md.append(kc.markdown_table(["run", f"step {p} (median)", "baseline: other warm steps (median)",
                                 f"added in step {p} (median)", "launches profiled",
                                 "added / launch incl. first-launch setup",
                                 f"per launch, {s['launches_small']}→{s['launches']} (judged)", "check"], rows))
    md.append("\n")
    rows = [(c["name"], fmt_ms(c["ncu_per_launch_s"], 2), fmt_ms(c["gpuscope_per_launch_s"], 2),
             fmt_ratio(c["ratio_per_launch"]), f"≥ {c['target']:g}×", c["result"],
             f"{fmt_ms(c['ncu_per_launch_incl_setup_s'], 2)} / {fmt_ms(c['gpuscope_per_launch_incl_setup_s'], 2)}",
             fmt_ratio(c["ratio_incl_setup"]), c["result_incl_setup"]) for c in summary["comparisons"]]
    md.append(kc.markdown_table(["comparison", "ncu per launch", "gpuscope per launch", "ncu / gpuscope per launch",
                                 "target", "result (judged)", "incl. first-launch setup: ncu / gpuscope",
                                 "ncu / gpuscope incl. setup", "result (incl. setup)"], rows))
    if s["notes"]:
        md.append("\nNotes:\n\n" + "".join(f"- {n}\n" for n in s["notes"]))
    md.append(f"\nOverall (per-launch targets): {'PASS' if summary['ok'] and not s['run_failures'] else 'FAIL'}. "
              "Raw step times per run: kernels_speed.json; raw logs: kernels_speed_work/.\n")
    return "".join(md)


# ---- running things ---------------------------------------------------------------------------

def default_ncu():
    found = shutil.which("ncu")
    if found:
        return found
    candidates = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))
    if candidates:
        return candidates[-1]
    return "/usr/local/cuda/bin/ncu" if os.access("/usr/local/cuda/bin/ncu", os.X_OK) else None


def quick_metrics(gs):
    """(metric list, where it came from): gpuscope's own --list-sets, else kernels_check.QUICK."""
    try:
        p = subprocess.run([gs, "kernels", "--list-sets", "--format", "json"], capture_output=True, text=True,
                           timeout=60)
        rows = json.loads(p.stdout)["reports"]["metric_set_quick"]["rows"]
        names = [r[0] for r in rows]
        if names:
            return names, "`gpuscope kernels --list-sets`"
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError, TypeError):
        pass
    return list(kc.QUICK), "kernels_check.QUICK (gpuscope kernels --list-sets gave no quick set)"


def run_logged(cmd, timeout, log):
    """kernels_check.run, with the log written here: ncu --set detailed's CSV runs to megabytes,
    so only the head and tail of a long stdout are kept."""
    res = kc.run(cmd, timeout)
    out = res["stdout"] or ""
    if len(out) > 200_000:
        out = out[:100_000] + f"\n... [{len(out) - 150_000} characters left out] ...\n" + out[-50_000:]
    with open(log, "w") as f:
        f.write(f"$ {' '.join(str(c) for c in cmd)}\nexit {res['rc']} in {res['wall_s']:.3f} s\n--- stdout\n{out}"
                f"\n--- stderr\n{res['stderr']}")
    return res


class Runner:
    def __init__(self, a, gs, ncu, quick, ncu_flags, gs_cache):
        self.a, self.gs, self.ncu, self.quick = a, gs, ncu, quick
        self.ncu_flags, self.gs_cache = ncu_flags, gs_cache
        self.work = os.path.join(a.out, "kernels_speed_work")
        os.makedirs(self.work, exist_ok=True)
        self.prog = [a.python, PROGRAM, *PROGRAM_ARGS]

    def tool_command(self, tool, mset, replay, stem, gs_select, ncu_select):
        """gpuscope kernels or ncu around self.prog with metric set mset, replay mode replay
        (gpuscope), and the tool's launch selection (gs_select / ncu_select: its arguments)."""
        if tool == "gpuscope":
            cmd = [self.gs, "kernels", "--set", mset, "-o", stem, "-f"]
            if replay != "kernel":
                cmd += ["--replay-mode", replay]  # no replay: nothing to flush between passes
            elif self.gs_cache:
                cmd += ["--cache-control", self.gs_cache]
            return cmd + gs_select + ["--", *self.prog]
        cmd = [self.ncu, *(["--metrics", ",".join(self.quick)] if mset == "quick" else ["--set", mset]),
               *self.ncu_flags]
        return cmd + ncu_select + self.prog

    def command(self, config, stem):
        tool, mset, replay, profiles = CONFIGS[config]
        if tool is None:
            return list(self.prog)
        count = ["--launch-count", str(self.a.launches)]
        return self.tool_command(tool, mset, replay, stem, count if profiles else ["-k", NO_MATCH],
                                 count if profiles else ["--kernel-name", f"regex:{NO_MATCH}"])

    def once(self, config, rnd, timeout):
        """(wall s or None when the run failed, launches profiled or None, note or None)."""
        stem = os.path.join(self.work, f"{config}_r{rnd}")
        res = run_logged(self.command(config, stem), timeout, stem + ".log")
        tool = CONFIGS[config][0]
        if res["rc"] != 0:
            why = "timed out" if "timed out" in (res["stderr"] or "") else f"exit {res['rc']}"
            return None, None, f"{config} round {rnd}: {why}: {(res['stderr'] or '')[-300:].strip()!r}"
        if tool == "gpuscope":
            db = stem + ".sqlite"
            if not os.path.exists(db):  # a run that profiled nothing may write no database
                return res["wall_s"], 0, None if not CONFIGS[config][3] else f"{config} round {rnd}: no {db}"
            n = len(kc.gs_launches(db))
            os.remove(db)  # counted; the databases are not brought back
            return res["wall_s"], n, None
        if tool == "ncu":
            return res["wall_s"], len(kc.parse_ncu_csv(res["stdout"])), None
        return res["wall_s"], None, None


class StepRunner(Runner):
    """The step method's processes: resnet_train.py --print-steps untraced or under one tool whose
    profiled launches are confined to the NVTX range `step P`."""
    def __init__(self, a, gs, ncu, quick, ncu_flags, gs_cache):
        super().__init__(a, gs, ncu, quick, ncu_flags, gs_cache)
        self.prog_args = ["--steps", str(a.steps), "--warmup", str(a.warmup), "--print-steps"]
        self.prog = [a.python, PROGRAM, *self.prog_args]
        self.gs_filter = ["--nvtx-include", f"step {a.profile_step}"]
        self.ncu_filter = ["--nvtx", "--nvtx-include", f"step {a.profile_step}/"]  # ncu: push/pop range NAME/

    def command(self, config, n, stem):
        if config == "untraced":
            return list(self.prog)
        tool, mset, replay = STEP_CONFIGS[config]
        count = ["--launch-count", str(n)]
        return self.tool_command(tool, mset, replay, stem, self.gs_filter + count, self.ncu_filter + count)

    def once(self, config, n, rnd, timeout):
        """{'round', 'steps_s' (None when the run failed), 'profiled' (None untraced), 'wall_s', 'note'?}."""
        key = run_key(config, n)
        stem = os.path.join(self.work, f"{key.replace('@', '_')}_r{rnd}")
        res = run_logged(self.command(config, n, stem), timeout, stem + ".log")
        rec = {"round": rnd, "steps_s": None, "profiled": None, "wall_s": res["wall_s"]}
        if res["rc"] != 0:
            why = "timed out" if "timed out" in (res["stderr"] or "") else f"exit {res['rc']}"
            rec["note"] = f"{key} round {rnd}: {why}: {(res['stderr'] or '')[-300:].strip()!r}"
            return rec
        steps = parse_steps(res["stdout"], self.a.steps)
        if steps is None:
            rec["note"] = f"{key} round {rnd}: the program printed no STEP line for some of its {self.a.steps} steps"
            return rec
        tool = None if config == "untraced" else STEP_CONFIGS[config][0]
        if tool == "gpuscope":
            db = stem + ".sqlite"
            rec["profiled"] = len(kc.gs_launches(db)) if os.path.exists(db) else 0
            if os.path.exists(db):
                os.remove(db)  # counted; the databases are not brought back
        elif tool == "ncu":
            rec["profiled"] = len(kc.parse_ncu_csv(res["stdout"]))
        rec["steps_s"] = steps
        return rec


def device_name():
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        return p.stdout.strip().splitlines()[0] if p.returncode == 0 and p.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown (no nvidia-smi)"


def cache_settings(gs, wanted=None):
    """(ncu flags, ncu's cache control, the --cache-control value for gpuscope's kernel-replay
    runs or None, a sentence). The flags are kernels_check.py's, with its cache control (or
    `wanted`); gpuscope gets the same value where its `kernels --help` lists --cache-control."""
    if wanted and hasattr(kc, "CACHE_CONTROL"):
        kc.CACHE_CONTROL = wanted
    flags = list(kc.Checker.ncu_flags())
    if "--cache-control" in flags:
        i = flags.index("--cache-control") + 1
        if wanted:
            flags[i] = wanted
        cache = flags[i]
    else:
        cache = wanted
        if wanted:
            flags += ["--cache-control", wanted]
    try:
        help_text = subprocess.run([gs, "kernels", "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        help_text = ""
    gs_cache = cache if cache and "--cache-control" in help_text else None
    if gs_cache:
        text = (f"`--cache-control {cache}` for ncu and for gpuscope's kernel-replay runs (`--replay-mode none` "
                "runs each kernel once: nothing is flushed)")
    else:
        text = f"ncu `--cache-control {cache}`; this gpuscope has no --cache-control and flushes nothing"
    return flags, cache, gs_cache, text


def tool_version(cmd):
    """The last line of `cmd` (e.g. ncu --version), or 'unknown'."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        lines = [l.strip() for l in p.stdout.splitlines() if l.strip()]
        return lines[-1] if p.returncode == 0 and lines else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run_rounds(a, t_start, notes, order, once):
    """Runs once(item, rnd, timeout) for every item of `order` in each of a.rounds rounds; with
    --budget-s, starts no round that would end past the budget (a note says so) and cuts each
    process's timeout to what is left. Returns the rounds done."""
    longest = 0.0
    for rnd in range(a.rounds):
        elapsed = time.monotonic() - t_start
        if a.budget_s and rnd > 0 and elapsed + longest > a.budget_s:
            notes.append(f"stopped after {rnd} of {a.rounds} rounds: another round (~{longest:.0f} s) would end past "
                         f"the {a.budget_s:.0f} s budget ({elapsed:.0f} s used)")
            return rnd
        t_round = time.monotonic()
        for item in order:
            timeout = a.timeout
            if a.budget_s:
                timeout = max(10, min(timeout, int(a.budget_s - (time.monotonic() - t_start))))
            once(item, rnd, timeout)
        longest = max(longest, time.monotonic() - t_round)
    return a.rounds


def write_outputs(a, text, data):
    with open(os.path.join(a.out, "kernels_speed.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "kernels_speed.json"), "w") as f:
        json.dump(finite(data), f, indent=1, default=str)
    print(text)


def run_process_method(a, sets, common, notes, t_start):
    """--method process: whole-process wall times (the earlier method)."""
    gs, ncu, quick, ncu_flags, gs_cache = (common[k] for k in ("gs", "ncu", "quick", "ncu_flags", "gs_cache"))
    runner = Runner(a, gs, ncu, quick, ncu_flags, gs_cache)
    configs = [c for c, (tool, mset, _, _) in CONFIGS.items() if mset is None or mset in sets]

    for i in range(a.warmup_runs):
        run_logged(runner.prog, a.timeout, os.path.join(runner.work, f"warmup_{i}.log"))
    walls = {c: [] for c in configs}
    counts = {c: [] for c in configs}
    failures = []

    def once(c, rnd, timeout):
        wall, n, note = runner.once(c, rnd, timeout)
        walls[c].append(wall)
        if n is not None:
            counts[c].append(n)
        if note:
            failures.append(note)
    rounds_done = run_rounds(a, t_start, notes, configs, once)

    summary = summarize(walls, counts, a.launches, configs)
    for c, r in summary["runs"].items():
        if c != "untraced" and not r["complete"]:
            notes.append(f"{c}: launches profiled {r['profiled']} in {len(r['walls'])} round(s), expected "
                         f"{r['expected']} each: its comparisons are marked incomplete")
    notes += failures
    settings = {**common["settings"], "method": "process",
                "program": [os.path.basename(a.python), os.path.relpath(PROGRAM, ROOT), *PROGRAM_ARGS],
                "launches": a.launches, "rounds": a.rounds, "rounds_done": rounds_done, "sets": sorted(sets),
                "run_failures": len(failures), "notes": notes, "elapsed_s": time.monotonic() - t_start}
    write_outputs(a, report_markdown(summary, settings), {"settings": settings, **summary})
    return 0 if summary["ok"] and not failures else 1


def run_step_method(a, sets, common, notes, t_start):
    """--method step: the time added inside step P of each process (the default)."""
    gs, ncu, quick, ncu_flags, gs_cache = (common[k] for k in ("gs", "ncu", "quick", "ncu_flags", "gs_cache"))
    runner = StepRunner(a, gs, ncu, quick, ncu_flags, gs_cache)
    configs = [c for c, (_, mset, _) in STEP_CONFIGS.items() if mset in sets]
    order = [("untraced", None)] + [(c, a.launches) for c in configs] + [(c, a.launches_small) for c in configs]

    for i in range(a.warmup_runs):
        run_logged(runner.prog, a.timeout, os.path.join(runner.work, f"warmup_{i}.log"))
    records = {run_key(c, n): [] for c, n in order}
    failures = []

    def once(item, rnd, timeout):
        c, n = item
        rec = runner.once(c, n, rnd, timeout)
        records[run_key(c, n)].append(rec)
        if rec.get("note"):
            failures.append(rec["note"])
    rounds_done = run_rounds(a, t_start, notes, order, once)

    summary = summarize_steps(records, a.launches_small, a.launches, a.warmup, a.profile_step, configs)
    for key, r in summary["runs"].items():
        for problem in r["problems"]:
            if "the run failed" in problem:
                continue  # listed with the failures below
            tail = " (a warning: the untraced run is not part of the judged figure)" if key == "untraced" else \
                ": its comparisons are marked incomplete"
            notes.append(f"{key} {problem}{tail}")
    untraced = summary["runs"].get("untraced")
    if untraced and untraced["median_step_p_s"] is not None:
        notes.append(f"untraced: step {a.profile_step} {fmt_ms(untraced['median_step_p_s'])} against a baseline of "
                     f"{fmt_ms(untraced['median_baseline_s'])} (added {fmt_ms(untraced['median_added_s'])}; the other "
                     f"warm steps' spread {fmt_ms(untraced['median_spread_s'])}, medians over rounds)")
    notes += failures
    settings = {**common["settings"], "method": "step",
                "program": [os.path.basename(a.python), os.path.relpath(PROGRAM, ROOT), *runner.prog_args],
                "steps": a.steps, "warmup": a.warmup, "profile_step": a.profile_step,
                "gpuscope_filter": runner.gs_filter, "ncu_filter": runner.ncu_filter,
                "launches": a.launches, "launches_small": a.launches_small, "rounds": a.rounds,
                "rounds_done": rounds_done, "sets": sorted(sets), "run_failures": len(failures), "notes": notes,
                "elapsed_s": time.monotonic() - t_start}
    write_outputs(a, report_steps_markdown(summary, settings), {"settings": settings, **summary})
    return 0 if summary["ok"] and not failures else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="See the module docstring (validation/kernels_speed.py) for both methods.")
    ap.add_argument("--build", required=True, help="build folder with bin/gpuscope")
    ap.add_argument("--out", required=True)
    ap.add_argument("--method", choices=("step", "process"), default="step",
                    help="step (default): time added inside the profiled step of each process, against the other "
                         "steps of the same process; process: whole-process wall times (the earlier method, noisy)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds of every configuration (default 3 for step: about 90 s a round with the quick set; "
                         "2 for process: 3 rounds of both sets need more than the device's 500 s; see --budget-s)")
    ap.add_argument("--launches", type=int, default=60, help="launches profiled (default 60)")
    ap.add_argument("--launches-small", type=int, default=10,
                    help="step: the second, smaller launch count; per launch = (added(launches) - "
                         "added(launches-small)) / their difference (default 10)")
    ap.add_argument("--steps", type=int, default=7, help="step: resnet_train.py --steps (default 7)")
    ap.add_argument("--warmup", type=int, default=2,
                    help="step: resnet_train.py --warmup; steps before it are left out of the baseline (default 2)")
    ap.add_argument("--profile-step", type=int, default=3,
                    help="step: the step whose NVTX range holds every profiled launch (default 3)")
    ap.add_argument("--timeout", type=int, default=240, help="seconds per process (default 240)")
    ap.add_argument("--ncu", default=None,
                    help="ncu binary (default: ncu on PATH, else the newest /opt/nvidia/nsight-compute/*/ncu, "
                         "else /usr/local/cuda/bin/ncu)")
    ap.add_argument("--python", default=sys.executable, help="Python with torch and torchvision (default: this one)")
    ap.add_argument("--sets", default=None,
                    help="comma list of sets to compare: quick, detailed (default: quick for --method step, where "
                         "--sets quick,detailed adds gpuscope's and ncu's detailed set; ncu --set detailed at 60 "
                         "launches takes ~50 s a run, so pass --rounds 1 or 2 with it to stay within one 600 s "
                         "device call; quick,detailed for --method process)")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="stop starting rounds once another (as long as the longest so far) would end past this "
                         "many seconds from the start (0: no budget); each process's timeout is cut to what is left")
    ap.add_argument("--cache-control", choices=("all", "none"), default=None,
                    help="ncu's --cache-control, also passed to gpuscope's kernel-replay runs where gpuscope has the "
                         "option (default: kernels_check.py's)")
    ap.add_argument("--warmup-runs", type=int, default=1,
                    help="untraced runs before the first round, not counted (disk cache, driver; default 1)")
    a = ap.parse_args()
    step = a.method == "step"
    if a.sets is None:
        a.sets = "quick" if step else "quick,detailed"
    if a.rounds is None:
        a.rounds = 3 if step else 2
    sets = set(filter(None, a.sets.split(",")))
    if not sets or sets - {"quick", "detailed"} or a.rounds < 1 or a.launches < 1:
        ap.error("--sets takes quick and/or detailed; --rounds and --launches must be >= 1")
    if step and not 1 <= a.launches_small < a.launches:
        ap.error("--launches-small must be >= 1 and less than --launches")
    if step and not (0 <= a.warmup <= a.profile_step < a.steps and a.steps - a.warmup - 1 >= 2):
        ap.error("--profile-step must lie in warmup..steps-1, with at least 2 other warm steps for the baseline")
    os.makedirs(a.out, exist_ok=True)
    t_start = time.monotonic()

    gs = os.path.join(a.build, "bin", "gpuscope")
    if not os.access(gs, os.X_OK):
        print(f"kernels_speed: gpuscope not found at {gs} (build it, or scripts/device-bundle)", file=sys.stderr)
        return 1
    ncu = a.ncu or default_ncu()
    if not ncu or not (os.access(ncu, os.X_OK) or shutil.which(ncu)):
        print(f"kernels_speed: skipped: ncu not found ({ncu or 'not on PATH, none in /opt/nvidia/nsight-compute/'}); "
              "pass --ncu PATH", file=sys.stderr)
        return SKIP
    try:
        probe = subprocess.run([a.python, "-c", PROBE], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"kernels_speed: cannot run {a.python}: {e}", file=sys.stderr)
        return 1
    if probe.returncode in (3, 4, 5):
        what = {5: "no CUDA device"}.get(probe.returncode, probe.stdout.strip())
        print(f"kernels_speed: skipped: {what} ({a.python}); resnet_train.py needs torch, torchvision and a GPU",
              file=sys.stderr)
        return SKIP
    if probe.returncode != 0:
        print(f"kernels_speed: {a.python} -c <probe> exit {probe.returncode}: {probe.stderr[-500:]}", file=sys.stderr)
        return 1
    print(f"kernels_speed: {probe.stdout.strip()}", flush=True)

    quick, quick_source = quick_metrics(gs)
    notes = []
    if quick != list(kc.QUICK):
        notes.append(f"gpuscope's quick set {quick} differs from kernels_check.QUICK {kc.QUICK}; gpuscope's is used")
    ncu_flags, cache, gs_cache, cache_text = cache_settings(gs, a.cache_control)
    if cache == "all" and not gs_cache:
        notes.append("this gpuscope has no --cache-control (it never flushes caches) while ncu flushes them before "
                     "every pass: pass --cache-control none to compare like with like")
    common = {"gs": gs, "ncu": ncu, "quick": quick, "ncu_flags": ncu_flags, "gs_cache": gs_cache,
              "settings": {"python": a.python, "ncu": ncu, "ncu_flags": ncu_flags, "cache_control": cache,
                           "gpuscope_cache_control": gs_cache, "cache_text": cache_text, "gpuscope": gs,
                           "quick_metrics": quick, "ncu_version": tool_version([ncu, "--version"]),
                           "gpuscope_version": tool_version([gs, "--version"]), "quick_source": quick_source,
                           "device": device_name(), "torch": probe.stdout.strip()}}
    run = run_step_method if step else run_process_method
    return run(a, sets, common, notes, t_start)


if __name__ == "__main__":
    sys.exit(main())
