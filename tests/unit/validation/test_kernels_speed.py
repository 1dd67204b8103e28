#!/usr/bin/env python3
"""CPU tests of validation/kernels_speed.py (no GPU), both methods.

--method step (the default): the in-process arithmetic (step P against the median of the other
warm steps, the marginal per-launch figure (added(60) - added(10)) / 50, the figure including
first-launch setup), the checks (a wrong launch count, profiling that landed outside step P, a
failed run, the untraced baseline warning), and runs of the whole script against fake gpuscope /
ncu / python programs: the fake tools check the NVTX filter they are given (gpuscope
`--nvtx-include "step P"`, ncu `--nvtx --nvtx-include "step P/"`), tell the fake program through
FAKE_STEP_INDEX / FAKE_STEP_ADDED_MS how many milliseconds their N profiled launches add to which
step, and write what the real tools write (NAME.sqlite's kernel_profiles, ncu's CSV); the fake
program prints the STEP lines of resnet_train.py --print-steps with known step times, so every
figure is exact and hand-computed (no sleeping, no wall time asserted).
--method process: the whole-process arithmetic, and the whole script against fakes that sleep
known amounts (ratios far from their targets: 10x against 5, 40x against 10, 1.5x against 3, so a
slow machine does not change a verdict).
Both: two targets met and one missed, incomplete runs, the skips (no ncu, no torchvision).
Usage: python3 test_kernels_speed.py (exit 0 when all pass)."""
import json
import re
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(REPO / "validation"))
import kernels_check as kc  # noqa: E402
import kernels_speed as ks  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_kernels_check import FAKE_KERNELS_DB  # noqa: E402  (the fakes' kernel profile tables)

LAUNCHES = 10  # --launches of the end-to-end runs

# Seconds each fake sleeps: a fixed cost per run, and a cost per profiled launch by (set, mode).
FAKE_TIMES = r'''
import os
TOTAL_LAUNCHES = 300  # kernels the fake program launches
UNTRACED_S = 0.3
FIXED_S = {"gpuscope": 0.5, "ncu": 0.5}
PER_LAUNCH_S = {("gpuscope", "quick", "kernel"): 0.1, ("gpuscope", "quick", "none"): 0.025,
                ("gpuscope", "detailed", "kernel"): 0.3, ("ncu", "quick", None): 1.0, ("ncu", "detailed", None): 0.45}
def per_launch(tool, mset, mode):
    return float(os.environ.get(f"FAKE_PER_LAUNCH_{tool}_{mset}", PER_LAUNCH_S[(tool, mset, mode)]))
# The step method (no sleeping): ms that N profiled launches add to the profiled step, setup + N * per launch.
STEP_SETUP_MS = {("gpuscope", "quick", "kernel"): 300.0, ("gpuscope", "quick", "none"): 400.0,
                 ("gpuscope", "detailed", "kernel"): 1000.0, ("ncu", "quick", None): 500.0, ("ncu", "detailed", None): 2000.0}
STEP_PER_LAUNCH_MS = {("gpuscope", "quick", "kernel"): 30.0, ("gpuscope", "quick", "none"): 5.0,
                      ("gpuscope", "detailed", "kernel"): 300.0, ("ncu", "quick", None): 200.0,
                      ("ncu", "detailed", None): 450.0}
# The fake program's step times (ms) untraced: step 0 cold, then warm steps around 10 ms.
STEP_BASE_MS = [900.0, 40.0, 10.0, 10.1, 10.2, 9.8, 10.4]
def step_env(tag, key, nvtx_step, n):
    """Environment for the fake program: which step the N profiled launches land in
    (FAKE_LAND_OFFSET_<tag> moves them) and the ms they add there."""
    os.environ["FAKE_STEP_INDEX"] = str(nvtx_step + int(os.environ.get(f"FAKE_LAND_OFFSET_{tag}", "0")))
    os.environ["FAKE_STEP_ADDED_MS"] = str(STEP_SETUP_MS[key] + n * STEP_PER_LAUNCH_MS[key] if n else 0.0)
def profiled(tag, kfilter, count):
    """Launches profiled; FAKE_SHORT_<tag> (tag: gpuscope_quick, gpuscope_quick_none, ncu_quick, ...) takes some off."""
    import re
    matched = [i for i in range(TOTAL_LAUNCHES) if not kfilter or re.search(kfilter, f"kernel_{i}")]
    n = min(count, len(matched)) if count else len(matched)
    return max(0, n - int(os.environ.get(f"FAKE_SHORT_{tag}", "0")) if n else 0)
'''

FAKE_PYTHON = r'''#!/usr/bin/env python3
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_times import UNTRACED_S, STEP_BASE_MS
if sys.argv[1] != "-c" and not sys.argv[1].endswith("resnet_train.py"):  # as PYTHON of scripts/gpu-run
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
if sys.argv[1] == "-c":  # kernels_speed's probe for torch, torchvision and a GPU
    if os.environ.get("FAKE_NO_TORCHVISION"):
        print("torchvision is not importable: No module named 'torchvision'")
        sys.exit(4)
    print("torch 9.9 (fake), torchvision 0.99 (fake), CUDA device: Fake GPU")
    sys.exit(0)
assert sys.argv[1].endswith("examples/pytorch/resnet_train.py"), sys.argv
if "--print-steps" in sys.argv:  # kernels_speed --method step
    args = sys.argv[2:]
    assert args[0] == "--steps" and args[2] == "--warmup" and args[4:] == ["--print-steps"], args
    steps, added_at = int(args[1]), int(os.environ.get("FAKE_STEP_INDEX", "-1"))
    ms = [(STEP_BASE_MS[i] if i < len(STEP_BASE_MS) else 10.0) for i in range(steps)]
    if 0 <= added_at < steps:
        ms[added_at] += float(os.environ.get("FAKE_STEP_ADDED_MS", "0"))
    print(f"RESULT steps={steps} ms_per_step=10.1 final_loss=6.9 pid=1 device=0")
    for i, t in enumerate(ms):
        print(f"STEP {i} ms={t:.4f}")
    sys.exit(0)
assert sys.argv[2:] == ["--steps", "2", "--warmup", "1"], sys.argv
time.sleep(UNTRACED_S)
print("RESULT steps=2 ms_per_step=12.0 final_loss=6.9 pid=1 device=0")
'''

FAKE_GPUSCOPE = r'''#!/usr/bin/env python3
import json, os, sqlite3, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_times import FIXED_S, per_launch, profiled, step_env
from fake_kernels_db import new_kernels_db
args = sys.argv[1:]
if args == ["--version"]:
    print("gpuscope 0.0 (fake)")
    sys.exit(0)
assert args[0] == "kernels", args
if args[1:] == ["--help"]:
    print("  --cache-control TEXT  all: flush caches before every replay pass; none: ...")
    sys.exit(0)
if "--list-sets" in args:
    rows = [[m, "", "", ""] for m in QUICK_LIST]
    print(json.dumps({"schema_version": 1, "command": "kernels",
                      "reports": {"metric_set_quick": {"name": "metric_set_quick", "rows": rows}}}))
    sys.exit(0)
dash = args.index("--")
opts, prog = args[1:dash], args[dash + 1:]
def opt(name, default=None):
    return opts[opts.index(name) + 1] if name in opts else default
mset, mode = opt("--set"), opt("--replay-mode", "kernel")
with open(os.environ["FAKE_GS_ARGS_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
if mode == "none" and opt("--cache-control") == "all":  # as the real one: no replay, nothing to flush
    sys.exit("gpuscope kernels: --cache-control all needs a replay")
tag = f"gpuscope_{mset}" + ("_none" if mode == "none" else "")
n = profiled(tag, opt("-k"), int(opt("--launch-count", "0")))
nvtx = opt("--nvtx-include")
if nvtx is not None:  # the step method: gpuscope takes the push/pop range's name
    assert nvtx.startswith("step ") and not nvtx.endswith("/"), nvtx
    step_env(tag, ("gpuscope", mset, mode), int(nvtx.split()[1]), n)
subprocess.run(prog, check=True)
if nvtx is None:
    time.sleep(FIXED_S["gpuscope"] + n * per_launch("gpuscope", mset, mode))
con = new_kernels_db(opt("-o") + ".sqlite")
con.execute("INSERT INTO strings (id, value) VALUES (1, 'kernel(int)'), (2, 'kernel'), (3, 'gpu__time_duration.sum')")
for i in range(n):
    cur = con.execute("INSERT INTO kernel_profiles (pid, launch_index, name_id, short_name_id) VALUES (1, ?, 1, 2)", (i,))
    con.execute("INSERT INTO kernel_metrics VALUES (?, 3, 1000.0)", (cur.lastrowid,))
con.commit()
'''

FAKE_NCU = r'''#!/usr/bin/env python3
import csv, json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_times import FIXED_S, per_launch, profiled, step_env
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2099.1.0.0 (build 1) (fake)")
    sys.exit(0)
with open(os.environ["FAKE_NCU_ARGS_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
i, opts = 0, {}
while i < len(args) and args[i].startswith("--"):
    if args[i] in ("--csv", "--nvtx"):
        opts[args[i]] = True
        i += 1
    else:
        opts[args[i]] = args[i + 1]
        i += 2
prog = args[i:]
mset = opts.get("--set", "quick")
n = profiled(f"ncu_{mset}", opts.get("--kernel-name", "").removeprefix("regex:"),
             int(opts.get("--launch-count", "0")))
nvtx = opts.get("--nvtx-include")
if nvtx is not None:  # the step method: ncu's push/pop range syntax NAME/ needs --nvtx
    assert opts.get("--nvtx") and nvtx.startswith("step ") and nvtx.endswith("/"), args
    step_env(f"ncu_{mset}", ("ncu", mset, None), int(nvtx[:-1].split()[1]), n)
print("==PROF== Connected to process 1")
sys.stdout.write(subprocess.run(prog, capture_output=True, text=True, check=True).stdout)
if nvtx is None:
    time.sleep(FIXED_S["ncu"] + n * per_launch("ncu", mset, None))
if not n:
    print("==WARNING== No kernels were profiled.")
    sys.exit(0)
w = csv.writer(sys.stdout, quoting=csv.QUOTE_ALL, lineterminator="\n")
w.writerow(["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
            "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
for rid in range(n):
    for m in ("gpu__time_duration.sum", "dram__bytes_read.sum"):
        w.writerow([rid, 1, "python3", "h", f"kernel_{rid}", 1, 7, "(256, 1, 1)", "(1, 1, 1)", 0, "9.0",
                    "Command line profiler metrics", m, "byte", "1,000"])
'''


class Arithmetic(unittest.TestCase):
    def test_ratio(self):
        self.assertEqual(ks.ratio(10.0, 2.0), 5.0)
        self.assertEqual(ks.ratio(10.0, 0.0), float("inf"))   # gpuscope added nothing measurable
        self.assertEqual(ks.ratio(10.0, -0.1), float("inf"))
        self.assertIsNone(ks.ratio(-0.1, 1.0))                 # ncu neither: nothing to compare
        self.assertIsNone(ks.ratio(None, 1.0))
        self.assertIsNone(ks.ratio(1.0, None))

    def test_summarize(self):
        walls = {"untraced": [10.0, 10.4, 9.9],
                 "gpuscope_quick": [12.0, 11.8, 12.4], "gpuscope_quick_none": [11.0, 11.3, 11.1],
                 "gpuscope_quick_0": [10.6, 10.5, 10.9], "ncu_quick": [16.0, 16.5, 15.7],
                 "ncu_quick_0": [11.0, 11.2, 11.1],
                 "gpuscope_detailed": [14.0, 14.5, 13.2], "gpuscope_detailed_0": [10.7, 10.6, 10.8],
                 "ncu_detailed": [41.0, None, 40.0], "ncu_detailed_0": [11.4, 11.5, 11.3]}
        counts = {c: [60 if ks.CONFIGS[c][3] else 0] * sum(w is not None for w in ws)
                  for c, ws in walls.items() if c != "untraced"}
        s = ks.summarize(walls, counts, 60)
        runs = s["runs"]
        self.assertAlmostEqual(runs["gpuscope_quick"]["median_s"], 12.0)
        self.assertAlmostEqual(runs["gpuscope_quick"]["added_s"], 2.0)
        self.assertAlmostEqual(runs["ncu_quick"]["added_s"], 6.0)
        # (12.0 - 10.6) / 60 and (16.0 - 11.1) / 60
        self.assertAlmostEqual(runs["gpuscope_quick"]["per_launch_s"], 1.4 / 60)
        self.assertAlmostEqual(runs["ncu_quick"]["per_launch_s"], 4.9 / 60)
        self.assertAlmostEqual(runs["gpuscope_quick_none"]["per_launch_s"], 0.5 / 60)
        self.assertIsNone(runs["gpuscope_quick_0"]["per_launch_s"])
        comps = {c["name"]: c for c in s["comparisons"]}
        q, n, d = comps["quick, kernel replay"], comps["quick, --replay-mode none"], comps["detailed"]
        self.assertAlmostEqual(q["ratio_per_launch"], 4.9 / 1.4)
        self.assertEqual((q["result"], q["target"]), ("FAIL", 5.0))   # 3.5x < 5
        self.assertAlmostEqual(q["ratio_total"], 3.0)
        self.assertEqual(q["result_total"], "FAIL")
        self.assertAlmostEqual(n["ratio_per_launch"], 4.9 / 0.5)
        self.assertEqual(n["result"], "FAIL")                        # 9.8x < 10
        self.assertAlmostEqual(n["ratio_total"], 6.0 / 1.1)
        # ncu detailed failed once: the median of its two good rounds, and incomplete.
        self.assertAlmostEqual(runs["ncu_detailed"]["median_s"], 40.5)
        self.assertEqual(runs["ncu_detailed"]["failed"], 1)
        self.assertFalse(runs["ncu_detailed"]["complete"])
        self.assertAlmostEqual(d["ratio_per_launch"], (40.5 - 11.4) / (14.0 - 10.7))
        self.assertEqual(d["result"], "FAIL (incomplete)")
        self.assertFalse(s["ok"])
        # The same with every run complete and faster gpuscope: all three pass.
        walls["ncu_detailed"] = [41.0, 40.0, 40.5]
        walls["gpuscope_quick"] = [11.5, 11.4, 11.6]
        walls["gpuscope_quick_none"] = [10.9, 10.95, 10.85]
        counts["ncu_detailed"] = [60, 60, 60]
        s = ks.summarize(walls, counts, 60)
        self.assertEqual([c["result"] for c in s["comparisons"]], ["PASS", "PASS", "PASS"])
        self.assertAlmostEqual(s["comparisons"][0]["ratio_per_launch"], 4.9 / 0.9)
        self.assertAlmostEqual(s["comparisons"][1]["ratio_per_launch"], 4.9 / 0.3)
        self.assertTrue(s["ok"])
        # One gpuscope round profiled 59 launches: marked incomplete, per launch over the median count.
        counts["gpuscope_quick"] = [60, 59, 60]
        s = ks.summarize(walls, counts, 60)
        self.assertEqual(s["comparisons"][0]["result"], "FAIL (incomplete)")
        self.assertEqual(s["comparisons"][1]["result"], "PASS")
        self.assertFalse(s["ok"])
        # A no-match run that profiled something is incomplete too.
        counts["gpuscope_quick"] = [60, 60, 60]
        counts["ncu_detailed_0"] = [0, 1, 0]
        self.assertEqual(ks.summarize(walls, counts, 60)["comparisons"][2]["result"], "FAIL (incomplete)")

    def test_summarize_quick_only_and_noise(self):
        walls = {"untraced": [5.0], "gpuscope_quick": [5.4], "gpuscope_quick_none": [5.28],
                 "gpuscope_quick_0": [5.3], "ncu_quick": [8.3], "ncu_quick_0": [5.3]}
        counts = {"gpuscope_quick": [60], "gpuscope_quick_none": [60], "gpuscope_quick_0": [0],
                  "ncu_quick": [60], "ncu_quick_0": [0]}
        s = ks.summarize(walls, counts, 60)
        self.assertEqual([c["name"] for c in s["comparisons"]], ["quick, kernel replay", "quick, --replay-mode none"])
        self.assertAlmostEqual(s["comparisons"][0]["ratio_per_launch"], 30.0)
        # replay none ran faster than the no-match run: within noise, infinitely better, PASS.
        self.assertEqual(s["comparisons"][1]["ratio_per_launch"], float("inf"))
        self.assertEqual(s["comparisons"][1]["result"], "PASS")
        md = ks.report_markdown(s, {"program": ["python3", "examples/pytorch/resnet_train.py"], "launches": 60,
                                    "rounds_done": 1, "device": "X", "ncu": "ncu", "ncu_flags": ["--csv"],
                                    "quick_source": "test", "quick_metrics": kc.QUICK, "notes": [],
                                    "run_failures": 0})
        self.assertIn("| quick, kernel replay | 50.0 ms | 1.7 ms | 30.0× | ≥ 5× | PASS |", md)
        self.assertIn("∞ (gpuscope within noise)", md)
        self.assertIn("| `gpuscope kernels --set quick --launch-count 60` (kernel replay) | 5.40 s | 5.40 | 0.40 s "
                      "| 60 | 1.7 ms |", md)
        self.assertIn("Overall (per-launch targets): PASS", md)


def steps_s(added_ms, p=3, at=None):
    """The fake program's step times (s) with added_ms added to step `at` (default p)."""
    ms = [900.0, 40.0, 10.0, 10.1, 10.2, 9.8, 10.4]
    ms[p if at is None else at] += added_ms
    return [t / 1e3 for t in ms]


def rec(rnd, added_ms, n=None, at=None):
    return {"round": rnd, "steps_s": steps_s(added_ms, at=at), "profiled": n}


class StepArithmetic(unittest.TestCase):
    def test_parse_steps(self):
        text = ('==PROF== Connected to process 1\nRESULT steps=3 ms_per_step=10.1\nSTEP 0 ms=900.0000\n'
                'STEP 1 ms=40.5000\nSTEP 2 ms=10.2500\n"ID","Process ID"\n')
        self.assertEqual(ks.parse_steps(text, 3), [0.9, 0.0405, 0.01025])
        self.assertIsNone(ks.parse_steps(text, 4))   # step 3's line is missing
        self.assertIsNone(ks.parse_steps("", 1))

    def test_step_added(self):
        # Warm steps 2..6, step 3 profiled: baseline = median(10.0, 10.2, 9.8, 10.4) = 10.1 ms.
        r = ks.step_added(steps_s(600.0), 2, 3)
        self.assertAlmostEqual(r["baseline_s"], 0.0101)
        self.assertAlmostEqual(r["added_s"], 0.600)
        self.assertAlmostEqual(r["spread_s"], 0.0006)
        self.assertAlmostEqual(r["margin_s"], 0.002)          # the spread, at least 2 ms
        self.assertTrue(r["slowest"])
        self.assertFalse(r["within_spread"])
        r = ks.step_added(steps_s(0.0), 2, 3)                 # untraced: an ordinary step
        self.assertAlmostEqual(r["added_s"], 0.0)
        self.assertTrue(r["within_spread"])
        self.assertFalse(r["slowest"])
        r = ks.step_added(steps_s(2.4), 2, 3)                 # 12.5 ms: 0.1 ms past 10.4 + 2 ms
        self.assertTrue(r["slowest"])
        self.assertFalse(r["within_spread"])                  # 2.4 ms from the baseline, beyond 2 ms
        # A noisy other step widens the margin: others 10.0, 30.0, 9.8, 10.4 (spread 20.2 ms), step 3 at 45 ms
        # is not past 30.0 + 20.2.
        noisy = steps_s(34.9)
        noisy[4] = 0.030
        r = ks.step_added(noisy, 2, 3)
        self.assertAlmostEqual(r["baseline_s"], 0.0102)
        self.assertAlmostEqual(r["margin_s"], 0.0202)
        self.assertFalse(r["slowest"])
        # --warmup 1 takes step 1 (40 ms) into the baseline: median(40, 10.0, 10.2, 9.8, 10.4) = 10.2 ms.
        self.assertAlmostEqual(ks.step_added(steps_s(0.0), 1, 3)["baseline_s"], 0.0102)

    def records(self):
        return {"untraced": [rec(0, 0.0), rec(1, 0.3)],
                "gpuscope_quick@60": [rec(0, 2100.0, 60), rec(1, 2300.0, 60), rec(2, 2000.0, 60)],
                "gpuscope_quick@10": [rec(0, 600.0, 10), rec(1, 650.0, 10), rec(2, 560.0, 10)],
                "ncu_quick@60": [rec(0, 12500.0, 60), rec(1, 12000.0, 60), rec(2, 13000.0, 60)],
                "ncu_quick@10": [rec(0, 2500.0, 10), rec(1, 2400.0, 10), rec(2, 2700.0, 10)],
                "gpuscope_quick_none@60": [rec(0, 700.0, 60), rec(1, 690.0, 60), rec(2, 720.0, 60)],
                "gpuscope_quick_none@10": [rec(0, 450.0, 10), rec(1, 430.0, 10), rec(2, 460.0, 10)]}

    def test_summarize_steps(self):
        s = ks.summarize_steps(self.records(), 10, 60, 2, 3)
        runs, cfg = s["runs"], s["configs"]
        self.assertEqual(list(runs), ["untraced", "gpuscope_quick@60", "gpuscope_quick@10", "ncu_quick@60",
                                      "ncu_quick@10", "gpuscope_quick_none@60", "gpuscope_quick_none@10"])
        self.assertEqual(set(cfg), {"gpuscope_quick", "ncu_quick", "gpuscope_quick_none"})
        g60 = runs["gpuscope_quick@60"]
        self.assertAlmostEqual(g60["median_step_p_s"], 2.1101)   # 10.1 + 2100 ms
        self.assertAlmostEqual(g60["median_baseline_s"], 0.0101)
        self.assertAlmostEqual(g60["median_added_s"], 2.1)
        self.assertEqual((g60["profiled"], g60["complete"], g60["problems"]), ([60, 60, 60], True, []))
        self.assertAlmostEqual(g60["records"][1]["added_s"], 2.3)  # each run's figures are kept
        self.assertAlmostEqual(g60["per_launch_incl_setup_s"], 2.1 / 60)
        # The judged figure: (2100 - 600) / 50 = 30 ms; ncu (12500 - 2500) / 50 = 200 ms; none (700 - 450) / 50 = 5 ms.
        self.assertAlmostEqual(cfg["gpuscope_quick"]["per_launch_s"], 0.030)
        self.assertAlmostEqual(cfg["ncu_quick"]["per_launch_s"], 0.200)
        self.assertAlmostEqual(cfg["gpuscope_quick_none"]["per_launch_s"], 0.005)
        self.assertEqual((cfg["ncu_quick"]["launches_small"], cfg["ncu_quick"]["launches_large"]), (10, 60))
        q, n = s["comparisons"]
        self.assertAlmostEqual(q["ratio_per_launch"], 200 / 30)
        self.assertAlmostEqual(n["ratio_per_launch"], 40.0)
        self.assertAlmostEqual(q["ratio_incl_setup"], (12.5 / 60) / (2.1 / 60))
        self.assertEqual([c["result"] for c in s["comparisons"]], ["PASS", "PASS"])
        self.assertTrue(s["ok"])
        u = runs["untraced"]
        self.assertAlmostEqual(u["median_added_s"], 0.00015)
        self.assertAlmostEqual(u["median_spread_s"], 0.0006)
        self.assertTrue(u["complete"])
        self.assertIsNone(u["per_launch_incl_setup_s"])
        md = ks.report_steps_markdown(s, {
            "program": ["python3", "examples/pytorch/resnet_train.py", "--steps", "7", "--warmup", "2", "--print-steps"],
            "profile_step": 3, "steps": 7, "warmup": 2, "launches": 60, "launches_small": 10, "rounds_done": 3,
            "gpuscope_filter": ["--nvtx-include", "step 3"], "ncu_filter": ["--nvtx", "--nvtx-include", "step 3/"],
            "device": "X", "ncu": "ncu", "ncu_flags": ["--csv"], "quick_source": "test", "quick_metrics": kc.QUICK,
            "notes": [], "run_failures": 0})
        self.assertIn("| `gpuscope kernels --set quick` (kernel replay), N = 60 | 2110.1 ms | 10.1 ms | 2100.0 ms "
                      "| 60, 60, 60 | 35.00 ms | 30.00 ms | ok |", md)
        self.assertIn("| `gpuscope kernels --set quick` (kernel replay), N = 10 | 610.1 ms | 10.1 ms | 600.0 ms "
                      "| 10, 10, 10 | 60.00 ms | — | ok |", md)
        self.assertIn("| untraced | 10.2 ms | 10.1 ms | 0.1 ms | — | — | — | baseline spread 0.6 ms; ok |", md)
        self.assertIn("| quick, kernel replay | 200.00 ms | 30.00 ms | 6.7× | ≥ 5× | PASS | 208.33 ms / 35.00 ms "
                      "| 6.0× | PASS |", md)
        self.assertIn("| quick, --replay-mode none | 200.00 ms | 5.00 ms | 40.0× | ≥ 10× | PASS |", md)
        self.assertIn("Overall (per-launch targets): PASS", md)

    def test_summarize_steps_checks(self):
        # ncu profiled 59 launches once: both quick comparisons are incomplete; the count is the median (60).
        r = self.records()
        r["ncu_quick@60"][1]["profiled"] = 59
        s = ks.summarize_steps(r, 10, 60, 2, 3)
        self.assertEqual(s["runs"]["ncu_quick@60"]["problems"], ["round 1: 59 launches profiled, expected 60"])
        self.assertAlmostEqual(s["configs"]["ncu_quick"]["per_launch_s"], 0.200)
        self.assertEqual([c["result"] for c in s["comparisons"]], ["FAIL (incomplete)", "FAIL (incomplete)"])
        self.assertFalse(s["ok"])
        # replay none's launches landed in step 4 once: step 3 is not the slowest; only that comparison fails.
        r = self.records()
        r["gpuscope_quick_none@10"][2] = rec(2, 460.0, 10, at=4)
        s = ks.summarize_steps(r, 10, 60, 2, 3)
        (problem,) = s["runs"]["gpuscope_quick_none@10"]["problems"]
        self.assertEqual(problem, "round 2: step 3 10.1 ms, other warm steps 9.8–470.2 ms: step 3 is not the slowest "
                                  "warm step by 460.4 ms (the others' spread, at least 2 ms): the profiling landed "
                                  "elsewhere")
        self.assertEqual([c["result"] for c in s["comparisons"]], ["PASS", "FAIL (incomplete)"])
        # A failed run: incomplete, its median from the other rounds.
        r = self.records()
        r["gpuscope_quick@10"][0] = {"round": 0, "steps_s": None, "profiled": None, "note": "exit 1"}
        s = ks.summarize_steps(r, 10, 60, 2, 3)
        run = s["runs"]["gpuscope_quick@10"]
        self.assertEqual((run["failed"], run["complete"]), (1, False))
        self.assertAlmostEqual(run["median_added_s"], 0.605)
        self.assertEqual(run["problems"], ["round 0: the run failed: exit 1"])
        self.assertEqual(s["comparisons"][0]["result"], "FAIL (incomplete)")
        # The untraced step 3 outside the others' spread: a warning, the comparisons stand.
        r = self.records()
        r["untraced"][1] = rec(1, 5.0)
        s = ks.summarize_steps(r, 10, 60, 2, 3)
        self.assertEqual(len(s["runs"]["untraced"]["problems"]), 1)
        self.assertIn("untraced step 3 15.1 ms", s["runs"]["untraced"]["problems"][0])
        self.assertTrue(s["runs"]["untraced"]["complete"])
        self.assertTrue(s["ok"])
        # gpuscope's 60 launches added less than its 10 (within noise): infinitely better, PASS.
        r = self.records()
        r["gpuscope_quick_none@60"] = [rec(i, 440.0, 60) for i in range(3)]
        s = ks.summarize_steps(r, 10, 60, 2, 3)
        self.assertAlmostEqual(s["configs"]["gpuscope_quick_none"]["per_launch_s"], -0.0002)
        self.assertEqual(s["comparisons"][1]["ratio_per_launch"], float("inf"))
        self.assertEqual(s["comparisons"][1]["result"], "PASS")
        # ncu's 60 launches added less than its 10: nothing to compare against, not measured.
        r = self.records()
        r["ncu_quick@60"] = [rec(i, 2400.0, 60) for i in range(3)]
        s = ks.summarize_steps(r, 10, 60, 2, 3)
        self.assertAlmostEqual(s["configs"]["ncu_quick"]["per_launch_s"], -0.002)
        self.assertEqual([c["result"] for c in s["comparisons"]], ["FAIL (not measured)", "FAIL (not measured)"])
        # A configuration with no N = 10 run: no judged figure, incomplete.
        r = self.records()
        del r["ncu_quick@10"]
        s = ks.summarize_steps(r, 10, 60, 2, 3)
        self.assertIsNone(s["configs"]["ncu_quick"]["per_launch_s"])
        self.assertEqual(s["comparisons"][0]["result"], "FAIL (incomplete)")


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="kernels-speed-test-"))
        bin_dir = self.tmp / "build" / "bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "fake_times.py").write_text(FAKE_TIMES)
        (bin_dir / "fake_kernels_db.py").write_text(FAKE_KERNELS_DB)
        for name, text in (("python", FAKE_PYTHON), ("ncu", FAKE_NCU),
                           ("gpuscope", FAKE_GPUSCOPE.replace("QUICK_LIST", repr(kc.QUICK)))):
            path = bin_dir / name
            path.write_text(text)
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        self.bin = bin_dir
        self.ncu_args = self.tmp / "ncu_args.jsonl"
        self.gs_args = self.tmp / "gpuscope_args.jsonl"

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_speed(self, out, *extra, env=None, ncu=None, method="process"):
        """Runs the script with --rounds 1 (a later --rounds in extra wins); method None: the default one."""
        counts = ["--launches", str(LAUNCHES)] if method == "process" else []
        how = ["--method", method] if method else []
        cmd = [sys.executable, str(REPO / "validation" / "kernels_speed.py"), "--build", str(self.tmp / "build"),
               "--out", str(out), *how, "--rounds", "1", *counts, "--warmup-runs", "0",
               "--ncu", ncu or str(self.bin / "ncu"), "--python", str(self.bin / "python"), "--timeout", "120", *extra]
        full = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_")}
        full.update(FAKE_NCU_ARGS_LOG=str(self.ncu_args), FAKE_GS_ARGS_LOG=str(self.gs_args), **(env or {}))
        return subprocess.run(cmd, capture_output=True, text=True, timeout=400, env=full)

    def test_process_method_end_to_end(self):
        # The fakes sleep, so the walls depend on how busy this machine is: this test asserts the
        # arithmetic from the reported medians and the verdicts' agreement with their ratios, never
        # which verdict a wall time gave (summarize's verdicts are asserted on exact figures above).
        out = self.tmp / "out"
        r = self.run_speed(out)
        md_path = out / "kernels_speed.md"
        self.assertTrue(md_path.exists(), r.stdout[-3000:] + r.stderr[-3000:])
        md = md_path.read_text()
        data = json.loads((out / "kernels_speed.json").read_text())
        self.assertEqual(r.returncode, 0 if data["ok"] else 1, md + r.stderr[-3000:])
        runs = data["runs"]
        self.assertEqual(set(runs), set(ks.CONFIGS))
        for c, run in runs.items():
            if c != "untraced":
                self.assertEqual(run["profiled"], [LAUNCHES if ks.CONFIGS[c][3] else 0], c)
                self.assertTrue(run["complete"], c)
        comps = {c["name"]: c for c in data["comparisons"]}
        self.assertEqual([c["name"] for c in data["comparisons"]],
                         ["quick, kernel replay", "quick, --replay-mode none", "detailed"])
        self.assertEqual([c["target"] for c in data["comparisons"]], [5, 10, 3])
        # Per launch = (T(N) - T(nothing matched)) / N, from the reported medians, for both tools.
        for c in comps.values():
            for run, fixed in ((c["ncu"], c["ncu_fixed"]), (c["gpuscope"], c["gpuscope_fixed"])):
                want = (runs[run]["median_s"] - runs[fixed]["median_s"]) / LAUNCHES
                self.assertAlmostEqual(runs[run]["per_launch_s"], want, places=9)
            self.assertAlmostEqual(c["ncu_added_s"], runs[c["ncu"]]["median_s"] - runs["untraced"]["median_s"])
            # The JSON writes an infinite ratio as "inf".
            ratios = {k: float("inf") if c[k] == "inf" else c[k] for k in ("ratio_per_launch", "ratio_total")}
            self.assertEqual(ratios["ratio_per_launch"], ks.ratio(c["ncu_per_launch_s"], c["gpuscope_per_launch_s"]))
            self.assertEqual(ratios["ratio_total"], ks.ratio(c["ncu_added_s"], c["gpuscope_added_s"]))
            # Each verdict is its ratio against its target.
            for key, x in (("result", ratios["ratio_per_launch"]), ("result_total", ratios["ratio_total"])):
                want = "FAIL (not measured)" if x is None else "PASS" if x >= c["target"] else "FAIL"
                self.assertEqual(c[key], want, c)
            self.assertRegex(md, r"\| " + re.escape(c["name"]) + r" \| -?[\d.]+ ms \| -?[\d.]+ ms \| [^|]+ \| ≥ "
                             + f"{c['target']:g}" + r"× \| " + re.escape(c["result"]) + r" \|")
        self.assertEqual(data["ok"], all(c["result"] == "PASS" for c in comps.values()))
        # What ncu was asked: the quick list that gpuscope lists, kernels_check's flags, the count or no-match filter.
        calls = [json.loads(l) for l in self.ncu_args.read_text().splitlines()]
        self.assertEqual(len(calls), 4)
        for call in calls:
            self.assertEqual(call[call.index("--clock-control") + 1], "none")
            self.assertTrue(call[-6].endswith("/python") and call[-5].endswith("resnet_train.py"), call)
        quick = [c for c in calls if "--metrics" in c]
        self.assertEqual(len(quick), 2)
        self.assertTrue(all(c[c.index("--metrics") + 1] == ",".join(kc.QUICK) for c in quick))
        detailed = [c for c in calls if "--set" in c]
        self.assertTrue(len(detailed) == 2 and all(c[c.index("--set") + 1] == "detailed" for c in detailed))
        self.assertEqual(sum(c[c.index("--launch-count") + 1] == str(LAUNCHES) for c in calls if "--launch-count" in c), 2)
        self.assertEqual(sum("regex:^no_such_kernel$" in c for c in calls), 2)
        self.assertEqual(data["settings"]["quick_source"], "`gpuscope kernels --list-sets`")
        # Cache control: kernels_check.py's value for ncu, the same for gpuscope's kernel-replay runs.
        cache = calls[0][calls[0].index("--cache-control") + 1]
        self.assertEqual(cache, kc.Checker.ncu_flags()[kc.Checker.ncu_flags().index("--cache-control") + 1])
        self.assertEqual(data["settings"]["gpuscope_cache_control"], cache)
        gs_calls = [json.loads(l) for l in self.gs_args.read_text().splitlines()]
        self.assertEqual(len(gs_calls), 5)
        for call in gs_calls:
            want = None if "--replay-mode" in call else cache
            got = call[call.index("--cache-control") + 1] if "--cache-control" in call else None
            self.assertEqual(got, want, call)
        self.assertEqual(data["settings"]["ncu_version"], "Version 2099.1.0.0 (build 1) (fake)")
        self.assertIn("gpuscope: gpuscope 0.0 (fake). ncu: ", md)
        # The report: both tables, the verdicts, the raw logs.
        self.assertIn("| run | wall (median) | walls (s) | added over untraced | launches profiled |", md)
        self.assertIn(f"Overall (per-launch targets): {'PASS' if data['ok'] else 'FAIL'}", md)
        logs = sorted(p.name for p in (out / "kernels_speed_work").iterdir())
        self.assertEqual(logs, sorted(f"{c}_r0.log" for c in ks.CONFIGS), logs)
        self.assertFalse(list((out / "kernels_speed_work").glob("*.sqlite")))

    def test_incomplete_run(self):
        # gpuscope detailed profiles one launch too few; its ratio would pass (ncu 450 ms against 20 ms).
        out = self.tmp / "short"
        r = self.run_speed(out, "--sets", "detailed", "--cache-control", "all",
                           env={"FAKE_SHORT_gpuscope_detailed": "1", "FAKE_PER_LAUNCH_gpuscope_detailed": "0.02"})
        md = (out / "kernels_speed.md").read_text()
        self.assertEqual(r.returncode, 1, md + r.stderr[-3000:])
        data = json.loads((out / "kernels_speed.json").read_text())
        self.assertEqual(set(data["runs"]), {"untraced", "gpuscope_detailed", "ncu_detailed", "gpuscope_detailed_0",
                                             "ncu_detailed_0"})
        self.assertEqual(data["runs"]["gpuscope_detailed"]["profiled"], [LAUNCHES - 1])
        (comp,) = data["comparisons"]
        self.assertEqual(comp["result"], "FAIL (incomplete)")
        self.assertIn(f"{LAUNCHES - 1} (expected {LAUNCHES}: INCOMPLETE)", md)
        self.assertIn("gpuscope_detailed: launches profiled [9]", md)
        # --cache-control all went to both tools.
        for log in (self.ncu_args, self.gs_args):
            for call in (json.loads(l) for l in log.read_text().splitlines()):
                self.assertEqual(call[call.index("--cache-control") + 1], "all", call)
        self.assertIn("Cache control: `--cache-control all` for ncu and for gpuscope's kernel-replay runs", md)

    # ---- --method step --------------------------------------------------------------------

    STEP_ADDED_MS = {"gpuscope_quick": (300.0, 30.0), "gpuscope_quick_none": (400.0, 5.0),
                     "gpuscope_detailed": (1000.0, 300.0), "ncu_quick": (500.0, 200.0), "ncu_detailed": (2000.0, 450.0)}

    def added_s(self, config, n):
        setup, per = self.STEP_ADDED_MS[config]
        return (setup + n * per) / 1e3

    def test_step_method_quick_and_detailed(self):
        out = self.tmp / "step"
        r = self.run_speed(out, "--sets", "quick,detailed", "--rounds", "2", method="step")
        md_path = out / "kernels_speed.md"
        self.assertTrue(md_path.exists(), r.stdout[-3000:] + r.stderr[-3000:])
        md = md_path.read_text()
        self.assertEqual(r.returncode, 1, md + r.stderr[-3000:])   # detailed misses its target
        data = json.loads((out / "kernels_speed.json").read_text())
        st = data["settings"]
        self.assertEqual((st["method"], st["rounds_done"], st["launches"], st["launches_small"]), ("step", 2, 60, 10))
        self.assertEqual(st["program"][1:], ["examples/pytorch/resnet_train.py", "--steps", "7", "--warmup", "2",
                                             "--print-steps"])
        runs = data["runs"]
        self.assertEqual(set(runs), {"untraced"} | {f"{c}@{n}" for c in ks.STEP_CONFIGS for n in (10, 60)})
        for key, run in runs.items():
            self.assertEqual(len(run["records"]), 2, key)
            self.assertEqual(run["problems"], [], key)
            self.assertTrue(run["complete"], key)
            if key == "untraced":
                self.assertAlmostEqual(run["median_added_s"], 0.0, places=9)
                continue
            c, n = key.split("@")[0], int(key.split("@")[1])
            self.assertEqual(run["profiled"], [n, n], key)
            # In-process: the fake step 3 is 10.1 ms + what the tool's N launches add, the baseline 10.1 ms.
            self.assertAlmostEqual(run["median_added_s"], self.added_s(c, n), places=6)
            self.assertAlmostEqual(run["median_baseline_s"], 0.0101, places=9)
            raw = run["records"][0]["steps_s"]                 # each run's raw step times
            self.assertEqual(len(raw), 7)
            self.assertAlmostEqual(raw[0], 0.9)
            self.assertAlmostEqual(raw[3], 0.0101 + self.added_s(c, n), places=6)
        # The judged figure: the fake per-launch ms, exactly; including setup = added(60) / 60.
        for c, (setup, per) in self.STEP_ADDED_MS.items():
            self.assertAlmostEqual(data["configs"][c]["per_launch_s"], per / 1e3, places=6, msg=c)
            self.assertAlmostEqual(data["configs"][c]["per_launch_incl_setup_s"], self.added_s(c, 60) / 60, places=6)
        comps = {c["name"]: c for c in data["comparisons"]}
        self.assertEqual([c["name"] for c in data["comparisons"]],
                         ["quick, kernel replay", "quick, --replay-mode none", "detailed"])
        self.assertAlmostEqual(comps["quick, kernel replay"]["ratio_per_launch"], 200 / 30, places=4)
        self.assertAlmostEqual(comps["quick, --replay-mode none"]["ratio_per_launch"], 40.0, places=3)
        self.assertAlmostEqual(comps["detailed"]["ratio_per_launch"], 1.5, places=4)
        self.assertEqual([c["result"] for c in data["comparisons"]], ["PASS", "PASS", "FAIL"])
        self.assertEqual(comps["detailed"]["result_incl_setup"], "FAIL")   # 29000 / 19000 ms
        # What the tools were asked: launches confined to step 3 in each one's syntax, N = 60 and 10.
        calls = [json.loads(l) for l in self.ncu_args.read_text().splitlines()]
        self.assertEqual(len(calls), 8)   # quick and detailed, N = 60 and 10, 2 rounds
        for call in calls:
            i = call.index("--nvtx-include")
            self.assertEqual((call[i - 1], call[i + 1]), ("--nvtx", "step 3/"), call)
            self.assertEqual(call[call.index("--clock-control") + 1], "none")
            self.assertNotIn("--kernel-name", call)
            self.assertTrue(call[-7].endswith("/python") and call[-6].endswith("resnet_train.py"), call)
        self.assertEqual(sorted(c[c.index("--launch-count") + 1] for c in calls), ["10"] * 4 + ["60"] * 4)
        self.assertTrue(all(c[c.index("--metrics") + 1] == ",".join(kc.QUICK) for c in calls if "--metrics" in c))
        gs_calls = [json.loads(l) for l in self.gs_args.read_text().splitlines()]
        self.assertEqual(len(gs_calls), 12)
        cache = st["gpuscope_cache_control"]
        self.assertEqual(cache, kc.Checker.ncu_flags()[kc.Checker.ncu_flags().index("--cache-control") + 1])
        for call in gs_calls:
            self.assertEqual(call[call.index("--nvtx-include") + 1], "step 3", call)
            self.assertIn(call[call.index("--launch-count") + 1], ("10", "60"))
            want = None if "--replay-mode" in call else cache
            self.assertEqual(call[call.index("--cache-control") + 1] if "--cache-control" in call else None, want)
        # The report: both tables with the hand-computed figures, the filters, the verdicts.
        self.assertIn("| untraced | 10.1 ms | 10.1 ms | 0.0 ms | — | — | — | baseline spread 0.6 ms; ok |", md)
        self.assertIn("| `gpuscope kernels --set quick` (kernel replay), N = 60 | 2110.1 ms | 10.1 ms | 2100.0 ms "
                      "| 60, 60 | 35.00 ms | 30.00 ms | ok |", md)
        self.assertIn("| `ncu --metrics <quick>`, N = 10 | 2510.1 ms | 10.1 ms | 2500.0 ms | 10, 10 | 250.00 ms | — "
                      "| ok |", md)
        self.assertIn("| quick, kernel replay | 200.00 ms | 30.00 ms | 6.7× | ≥ 5× | PASS | 208.33 ms / 35.00 ms "
                      "| 6.0× | PASS |", md)
        self.assertIn("| detailed | 450.00 ms | 300.00 ms | 1.5× | ≥ 3× | FAIL | 483.33 ms / 316.67 ms | 1.5× | FAIL |",
                      md)
        self.assertIn("gpuscope `--nvtx-include step 3`, ncu `--nvtx --nvtx-include step 3/`", md)
        self.assertIn("untraced: step 3 10.1 ms against a baseline of 10.1 ms", md)
        self.assertIn("Overall (per-launch targets): FAIL", md)
        logs = sorted(p.name for p in (out / "kernels_speed_work").iterdir())
        self.assertEqual(logs, sorted([f"untraced_r{i}.log" for i in range(2)] +
                                      [f"{c}_{n}_r{i}.log" for c in ks.STEP_CONFIGS for n in (10, 60) for i in range(2)]))

    def test_step_method_is_the_default(self):
        # No --method, no --sets: the step method on the quick set; --profile-step 4 moves the filters; the budget
        # stops after the first round and says so.
        out = self.tmp / "default"
        r = self.run_speed(out, "--profile-step", "4", "--rounds", "3", "--budget-s", "0.01", method=None)
        md = (out / "kernels_speed.md").read_text()
        self.assertEqual(r.returncode, 0, md + r.stderr[-3000:])   # both quick targets met
        data = json.loads((out / "kernels_speed.json").read_text())
        self.assertEqual((data["settings"]["method"], data["settings"]["sets"]), ("step", ["quick"]))
        self.assertEqual(set(data["configs"]), {"gpuscope_quick", "ncu_quick", "gpuscope_quick_none"})
        self.assertEqual(data["settings"]["rounds_done"], 1)
        self.assertIn("stopped after 1 of 3 rounds", md)
        # Step 4 untraced is 10.2 ms against median(10.0, 10.1, 9.8, 10.4) = 10.05 ms: every added is 0.15 ms more,
        # which the 60 - 10 difference cancels.
        self.assertAlmostEqual(data["runs"]["untraced"]["median_added_s"], 0.00015, places=9)
        self.assertAlmostEqual(data["runs"]["ncu_quick@60"]["median_added_s"], 12.50015, places=6)
        self.assertAlmostEqual(data["configs"]["ncu_quick"]["per_launch_s"], 0.200, places=6)
        self.assertEqual([c["result"] for c in data["comparisons"]], ["PASS", "PASS"])
        for call in (json.loads(l) for l in self.gs_args.read_text().splitlines()):
            self.assertEqual(call[call.index("--nvtx-include") + 1], "step 4")
        for call in (json.loads(l) for l in self.ncu_args.read_text().splitlines()):
            self.assertEqual(call[call.index("--nvtx-include") + 1], "step 4/")
        self.assertIn("Overall (per-launch targets): PASS", md)
        # A profiled step outside the warm steps is refused.
        r = self.run_speed(self.tmp / "bad", "--profile-step", "1", method=None)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--profile-step must lie in warmup..steps-1", r.stderr)

    def test_step_method_incomplete(self):
        # gpuscope kernel replay profiles one launch too few: its comparison fails as incomplete, replay none's passes.
        out = self.tmp / "short"
        r = self.run_speed(out, method="step", env={"FAKE_SHORT_gpuscope_quick": "1"})
        md = (out / "kernels_speed.md").read_text()
        self.assertEqual(r.returncode, 1, md + r.stderr[-3000:])
        data = json.loads((out / "kernels_speed.json").read_text())
        self.assertEqual(data["runs"]["gpuscope_quick@60"]["profiled"], [59])
        self.assertEqual([c["result"] for c in data["comparisons"]], ["FAIL (incomplete)", "PASS"])
        self.assertIn("gpuscope_quick@60 round 0: 59 launches profiled, expected 60: its comparisons are marked "
                      "incomplete", md)
        # 300 + 9 * 30 ms added, 570 / 9 per launch including setup.
        self.assertIn("| `gpuscope kernels --set quick` (kernel replay), N = 10 | 580.1 ms | 10.1 ms | 570.0 ms | 9 "
                      "| 63.33 ms | — | INCOMPLETE (see notes) |", md)
        # ncu's launches land in step 4 instead of 3 (its filter ignored, say): both quick comparisons incomplete.
        out = self.tmp / "elsewhere"
        r = self.run_speed(out, method="step", env={"FAKE_LAND_OFFSET_ncu_quick": "1"})
        md = (out / "kernels_speed.md").read_text()
        self.assertEqual(r.returncode, 1, md + r.stderr[-3000:])
        data = json.loads((out / "kernels_speed.json").read_text())
        self.assertEqual([c["result"] for c in data["comparisons"]], ["FAIL (incomplete)", "FAIL (incomplete)"])
        self.assertAlmostEqual(data["runs"]["ncu_quick@60"]["median_added_s"], -0.0001, places=9)
        self.assertIn("ncu_quick@60 round 0: step 3 10.1 ms, other warm steps 9.8–12510.2 ms: step 3 is not the "
                      "slowest warm step by 12500.4 ms (the others' spread, at least 2 ms): the profiling landed "
                      "elsewhere: its comparisons are marked incomplete", md)

    def test_skips(self):
        r = self.run_speed(self.tmp / "no-ncu", ncu=str(self.tmp / "nowhere" / "ncu"))
        self.assertEqual(r.returncode, ks.SKIP, r.stderr)
        self.assertIn("skipped: ncu not found", r.stderr)
        r = self.run_speed(self.tmp / "no-tv", env={"FAKE_NO_TORCHVISION": "1"})
        self.assertEqual(r.returncode, ks.SKIP, r.stderr)
        self.assertIn("skipped: torchvision is not importable", r.stderr)
        self.assertFalse(self.ncu_args.exists())  # nothing was run


if __name__ == "__main__":
    unittest.main(verbosity=2)
