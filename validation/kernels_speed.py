#!/usr/bin/env python3
"""The `kernels_speed` step of scripts/gpu-run: the time `gpuscope kernels` adds per profiled
launch against Nsight Compute (ncu) on a foreign PyTorch program (issue 16's speed target),
written to OUT/kernels_speed.md and OUT/kernels_speed.json, raw logs in OUT/kernels_speed_work/.

The program: examples/pytorch/resnet_train.py --steps 2 --warmup 1 (torchvision resnet18,
random weights, nothing downloaded; 2 train steps on the GPU). Each configuration below runs it
as a separate process, once per round, the configurations alternating within each round, for
--rounds rounds (default 2: a round takes about 2.5 minutes on H100, see --budget-s); medians
of the wall times are compared:

  untraced                 python resnet_train.py ...
  gpuscope quick           gpuscope kernels --set quick --launch-count 60            (kernel replay)
  gpuscope quick none      the same with --replay-mode none
  gpuscope quick 0         gpuscope kernels --set quick -k '^no_such_kernel$'        (nothing profiled)
  ncu quick                ncu --metrics <quick set> FLAGS --launch-count 60
  ncu quick 0              ncu --metrics <quick set> FLAGS --kernel-name regex:^no_such_kernel$
  gpuscope detailed (0)    gpuscope kernels --set detailed, 60 launches / nothing matched
  ncu detailed (0)         ncu --set detailed FLAGS, 60 launches / nothing matched

FLAGS are kernels_check.py's (--csv --print-units base --clock-control none --cache-control C
--print-kernel-base function): gpuscope never locks clocks; C, kernels_check.py's cache control
(or --cache-control), goes to gpuscope's kernel-replay runs too where `gpuscope kernels --help`
lists the option (--replay-mode none replays nothing, so flushes nothing). The quick set's
metric list is asked of gpuscope itself (`gpuscope kernels --list-sets --format json`), else
kernels_check.QUICK.

Per tool and configuration: time added over untraced = T - T(untraced), and time added per
profiled launch = (T(60 launches) - T(no launch matched)) / launches actually profiled (gpuscope:
the rows of NAME.sqlite's kernel_profiles; ncu: the launches of its CSV). --replay-mode none is
measured against the quick (kernel replay) no-match run: with nothing matched no replay happens.
Ratios ncu / gpuscope, judged per launch (the issue's wording), the total-added ratio beside:
  quick, kernel replay         >= 5
  quick, --replay-mode none    >= 10   (against ncu quick, which always replays)
  detailed                     >= 3
A comparison whose runs profiled another number of launches than --launches (or any launch with
nothing matched) is marked incomplete and fails.

Exit status: 0 when every target is met per launch, 1 otherwise or when a run failed, 77 when
ncu, torch, torchvision or a CUDA device is missing (skipped, with a message), 2 on bad usage.
Usage:
  kernels_speed.py --build BUILD --out OUT [--rounds N] [--launches 60] [--timeout S]
                   [--ncu PATH] [--python PY] [--sets quick,detailed] [--budget-s S]
                   [--cache-control all|none]
The arithmetic (summarize) is unit-tested without a GPU, and the whole script against fake
gpuscope / ncu / python programs, by tests/unit/validation/test_kernels_speed.py.
"""
import argparse
import glob
import json
import os
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


def fmt_ms(x):
    return "—" if x is None else f"{x * 1e3:.1f} ms"


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

    def command(self, config, stem):
        tool, mset, replay, profiles = CONFIGS[config]
        if tool is None:
            return list(self.prog)
        if tool == "gpuscope":
            cmd = [self.gs, "kernels", "--set", mset, "-o", stem, "-f"]
            if replay != "kernel":
                cmd += ["--replay-mode", replay]  # no replay: nothing to flush between passes
            elif self.gs_cache:
                cmd += ["--cache-control", self.gs_cache]
            cmd += ["--launch-count", str(self.a.launches)] if profiles else ["-k", NO_MATCH]
            return cmd + ["--", *self.prog]
        cmd = [self.ncu, *(["--metrics", ",".join(self.quick)] if mset == "quick" else ["--set", mset]),
               *self.ncu_flags]
        cmd += ["--launch-count", str(self.a.launches)] if profiles else ["--kernel-name", f"regex:{NO_MATCH}"]
        return cmd + self.prog

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="build folder with bin/gpuscope")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=2,
                    help="rounds of every configuration (default 2: 3 rounds of both sets need more than the "
                         "device's 500 s; see --budget-s)")
    ap.add_argument("--launches", type=int, default=60, help="launches profiled (default 60)")
    ap.add_argument("--timeout", type=int, default=240, help="seconds per process (default 240)")
    ap.add_argument("--ncu", default=None,
                    help="ncu binary (default: ncu on PATH, else the newest /opt/nvidia/nsight-compute/*/ncu, "
                         "else /usr/local/cuda/bin/ncu)")
    ap.add_argument("--python", default=sys.executable, help="Python with torch and torchvision (default: this one)")
    ap.add_argument("--sets", default="quick,detailed", help="comma list of sets to compare: quick, detailed")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="stop starting rounds once another (as long as the longest so far) would end past this "
                         "many seconds from the start (0: no budget); each process's timeout is cut to what is left")
    ap.add_argument("--cache-control", choices=("all", "none"), default=None,
                    help="ncu's --cache-control, also passed to gpuscope's kernel-replay runs where gpuscope has the "
                         "option (default: kernels_check.py's)")
    ap.add_argument("--warmup-runs", type=int, default=1,
                    help="untraced runs before the first round, not counted (disk cache, driver; default 1)")
    a = ap.parse_args()
    sets = set(filter(None, a.sets.split(",")))
    if not sets or sets - {"quick", "detailed"} or a.rounds < 1 or a.launches < 1:
        ap.error("--sets takes quick and/or detailed; --rounds and --launches must be >= 1")
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
    runner = Runner(a, gs, ncu, quick, ncu_flags, gs_cache)
    configs = [c for c, (tool, mset, _, _) in CONFIGS.items() if mset is None or mset in sets]

    for i in range(a.warmup_runs):
        run_logged(runner.prog, a.timeout, os.path.join(runner.work, f"warmup_{i}.log"))
    walls = {c: [] for c in configs}
    counts = {c: [] for c in configs}
    failures, longest = [], 0.0
    for rnd in range(a.rounds):
        elapsed = time.monotonic() - t_start
        if a.budget_s and rnd > 0 and elapsed + longest > a.budget_s:
            notes.append(f"stopped after {rnd} of {a.rounds} rounds: another round (~{longest:.0f} s) would end past "
                         f"the {a.budget_s:.0f} s budget ({elapsed:.0f} s used)")
            break
        t_round = time.monotonic()
        for c in configs:
            timeout = a.timeout
            if a.budget_s:
                timeout = max(10, min(timeout, int(a.budget_s - (time.monotonic() - t_start))))
            wall, n, note = runner.once(c, rnd, timeout)
            walls[c].append(wall)
            if n is not None:
                counts[c].append(n)
            if note:
                failures.append(note)
        longest = max(longest, time.monotonic() - t_round)
    rounds_done = len(walls["untraced"])

    summary = summarize(walls, counts, a.launches, configs)
    for c, r in summary["runs"].items():
        if c != "untraced" and not r["complete"]:
            notes.append(f"{c}: launches profiled {r['profiled']} in {len(r['walls'])} round(s), expected "
                         f"{r['expected']} each: its comparisons are marked incomplete")
    notes += failures
    settings = {"program": [os.path.basename(a.python), os.path.relpath(PROGRAM, ROOT), *PROGRAM_ARGS],
                "python": a.python, "launches": a.launches, "rounds": a.rounds, "rounds_done": rounds_done,
                "ncu": ncu, "ncu_flags": ncu_flags, "cache_control": cache,
                "gpuscope_cache_control": gs_cache, "cache_text": cache_text, "gpuscope": gs, "quick_metrics": quick,
                "ncu_version": tool_version([ncu, "--version"]), "gpuscope_version": tool_version([gs, "--version"]),
                "quick_source": quick_source, "device": device_name(), "sets": sorted(sets),
                "torch": probe.stdout.strip(), "run_failures": len(failures), "notes": notes,
                "elapsed_s": time.monotonic() - t_start}
    text = report_markdown(summary, settings)
    with open(os.path.join(a.out, "kernels_speed.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "kernels_speed.json"), "w") as f:
        json.dump(finite({"settings": settings, **summary}), f, indent=1, default=str)
    print(text)
    return 0 if summary["ok"] and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
