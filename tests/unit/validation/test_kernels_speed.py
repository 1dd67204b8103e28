#!/usr/bin/env python3
"""CPU tests of validation/kernels_speed.py (no GPU): the per-launch and total arithmetic, the
ratios and their verdicts (incomplete runs, gpuscope within noise), and runs of the whole script
against fake gpuscope / ncu / python programs that sleep known amounts and write what the real
tools write (NAME.sqlite's kernel_profiles, ncu's CSV): two targets met, one missed, a run that
profiled one launch too few, and the skips (no ncu, no torchvision).
The fakes' sleeps put every judged ratio far from its target (10x against 5, 40x against 10,
1.5x against 3), so a slow machine does not change a verdict; no wall time is asserted beyond
what the sleeps guarantee.
Usage: python3 test_kernels_speed.py (exit 0 when all pass)."""
import json
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
def profiled(tool, mset, kfilter, count):
    import re
    matched = [i for i in range(TOTAL_LAUNCHES) if not kfilter or re.search(kfilter, f"kernel_{i}")]
    n = min(count, len(matched)) if count else len(matched)
    return max(0, n - int(os.environ.get(f"FAKE_SHORT_{tool}_{mset}", "0")) if n else 0)
'''

FAKE_PYTHON = r'''#!/usr/bin/env python3
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_times import UNTRACED_S
if sys.argv[1] != "-c" and not sys.argv[1].endswith("resnet_train.py"):  # as PYTHON of scripts/gpu-run
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
if sys.argv[1] == "-c":  # kernels_speed's probe for torch, torchvision and a GPU
    if os.environ.get("FAKE_NO_TORCHVISION"):
        print("torchvision is not importable: No module named 'torchvision'")
        sys.exit(4)
    print("torch 9.9 (fake), torchvision 0.99 (fake), CUDA device: Fake GPU")
    sys.exit(0)
assert sys.argv[1].endswith("examples/pytorch/resnet_train.py"), sys.argv
assert sys.argv[2:] == ["--steps", "2", "--warmup", "1"], sys.argv
time.sleep(UNTRACED_S)
print("RESULT steps=2 ms_per_step=12.0 final_loss=6.9 pid=1 device=0")
'''

FAKE_GPUSCOPE = r'''#!/usr/bin/env python3
import json, os, sqlite3, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_times import FIXED_S, per_launch, profiled
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
n = profiled("gpuscope", mset, opt("-k"), int(opt("--launch-count", "0")))
subprocess.run(prog, check=True)
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
from fake_times import FIXED_S, per_launch, profiled
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2099.1.0.0 (build 1) (fake)")
    sys.exit(0)
with open(os.environ["FAKE_NCU_ARGS_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
i, opts = 0, {}
while i < len(args) and args[i].startswith("--"):
    if args[i] == "--csv":
        opts["--csv"] = True
        i += 1
    else:
        opts[args[i]] = args[i + 1]
        i += 2
prog = args[i:]
mset = opts.get("--set", "quick")
n = profiled("ncu", mset, opts.get("--kernel-name", "").removeprefix("regex:"), int(opts.get("--launch-count", "0")))
print("==PROF== Connected to process 1")
sys.stdout.write(subprocess.run(prog, capture_output=True, text=True, check=True).stdout)
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

    def run_speed(self, out, *extra, env=None, ncu=None):
        cmd = [sys.executable, str(REPO / "validation" / "kernels_speed.py"), "--build", str(self.tmp / "build"),
               "--out", str(out), "--rounds", "1", "--launches", str(LAUNCHES), "--warmup-runs", "0",
               "--ncu", ncu or str(self.bin / "ncu"), "--python", str(self.bin / "python"), "--timeout", "120", *extra]
        full = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_")}
        full.update(FAKE_NCU_ARGS_LOG=str(self.ncu_args), FAKE_GS_ARGS_LOG=str(self.gs_args), **(env or {}))
        return subprocess.run(cmd, capture_output=True, text=True, timeout=400, env=full)

    def test_two_targets_met_one_missed(self):
        out = self.tmp / "out"
        r = self.run_speed(out)
        md_path = out / "kernels_speed.md"
        self.assertTrue(md_path.exists(), r.stdout[-3000:] + r.stderr[-3000:])
        md = md_path.read_text()
        self.assertEqual(r.returncode, 1, md + r.stderr[-3000:])   # detailed misses its target
        data = json.loads((out / "kernels_speed.json").read_text())
        runs = data["runs"]
        self.assertEqual(set(runs), set(ks.CONFIGS))
        for c, run in runs.items():
            if c != "untraced":
                self.assertEqual(run["profiled"], [LAUNCHES if ks.CONFIGS[c][3] else 0], c)
                self.assertTrue(run["complete"], c)
        comps = {c["name"]: c for c in data["comparisons"]}
        self.assertEqual([c["name"] for c in data["comparisons"]],
                         ["quick, kernel replay", "quick, --replay-mode none", "detailed"])
        # The judged ratios: fake ncu 1000 ms per launch against 100 ms and 25 ms; 450 against 300.
        self.assertEqual(comps["quick, kernel replay"]["result"], "PASS", md)
        self.assertEqual(comps["quick, --replay-mode none"]["result"], "PASS", md)
        self.assertEqual(comps["detailed"]["result"], "FAIL", md)
        self.assertEqual(comps["detailed"]["result_total"], "FAIL", md)
        # Per launch = (T(N) - T(nothing matched)) / N, from the reported medians, for both tools.
        for c in comps.values():
            for run, fixed in ((c["ncu"], c["ncu_fixed"]), (c["gpuscope"], c["gpuscope_fixed"])):
                want = (runs[run]["median_s"] - runs[fixed]["median_s"]) / LAUNCHES
                self.assertAlmostEqual(runs[run]["per_launch_s"], want, places=9)
            self.assertAlmostEqual(c["ncu_added_s"], runs[c["ncu"]]["median_s"] - runs["untraced"]["median_s"])
            if c["gpuscope_per_launch_s"] > 0:
                self.assertAlmostEqual(c["ratio_per_launch"], c["ncu_per_launch_s"] / c["gpuscope_per_launch_s"])
            self.assertAlmostEqual(c["ratio_total"], c["ncu_added_s"] / c["gpuscope_added_s"])
        # The sleeps bound them from below: ncu slept 10 s over 10 quick launches, gpuscope 3 s over detailed's.
        self.assertGreater(comps["quick, kernel replay"]["ncu_per_launch_s"], 0.5)
        self.assertGreater(comps["detailed"]["gpuscope_per_launch_s"], 0.1)
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
        self.assertRegex(md, r"\| quick, kernel replay \| [\d.]+ ms \| [\d.]+ ms \| [\d.]+× \| ≥ 5× \| PASS \|")
        self.assertRegex(md, r"\| detailed \| [\d.]+ ms \| [\d.]+ ms \| [\d.]+× \| ≥ 3× \| FAIL \|")
        self.assertIn("Overall (per-launch targets): FAIL", md)
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
