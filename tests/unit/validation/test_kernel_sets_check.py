#!/usr/bin/env python3
"""CPU tests of validation/kernel_sets_check.py (no GPU): the judging of one set over rounds
(medians, the tools' own spread as noise, ncu's spread beyond the target counted), the
commands given to each tool per program, and end-to-end runs against fake gpuscope / ncu
programs (pass, a metric 5 % off, a tool that fails).
Usage: python3 test_kernel_sets_check.py (exit 0 when all pass)."""
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_sets_check as ks  # noqa: E402
from test_kernels_check import FAKE_COMMON, FAKE_GPUSCOPE, FAKE_KERNELS_DB, FAKE_NCU  # noqa: E402  (the fakes)


def launch(name, **metrics):
    return {"name": name, "metrics": metrics}


class CompareSet(unittest.TestCase):
    def test_medians_noise_and_ncu_spread(self):
        b, c, p1, p2, p3 = ("dram__bytes_read.sum", "smsp__inst_executed.sum", "a.pct", "b.pct", "c.pct")
        metrics = [b, c, p1, p2, p3]
        gs = [[launch("k", **{b: 100e6, c: 1000, p1: 50, p2: 60, p3: 54})],
              [launch("k", **{b: 100e6, c: 1000, p1: 50, p2: 60, p3: 54})]]
        nc = [[launch("k", **{b: 100.5e6, c: 1030, p1: 45, p2: 50, p3: 50})],
              [launch("k", **{b: 100.5e6, c: 1030, p1: 55, p2: 54, p3: 54})]]
        rows, s = ks.compare_set(metrics, gs, nc)
        by = {r["metric"]: r for r in rows}
        # bytes: -0.50 % of 100.5e6 (inside 1 %, and inside the 1 MiB floor too)
        self.assertEqual((by[b]["result"], by[b]["basis"]), ("PASS", "target"))
        self.assertAlmostEqual(by[b]["diff_pct"], -0.4975, places=3)
        # a count 2.9 % low: outside 1 %, no noise to excuse it
        self.assertEqual(by[c]["result"], "FAIL")
        self.assertAlmostEqual(by[c]["diff_pct"], -2.9126, places=3)
        # ncu 45 and 55 (median 50): gpuscope's 50 agrees; ncu's own spread (10 points) is beyond 3 %
        self.assertEqual((by[p1]["result"], by[p1]["basis"]), ("PASS", "target"))
        self.assertTrue(by[p1]["ncu_self_beyond"])
        # ncu 50 and 54 (median 52, spread 4): gpuscope 60 is 8 points off, beyond the spread
        self.assertEqual(by[p2]["result"], "FAIL")
        self.assertEqual(by[p2]["tolerance"], 4)
        # gpuscope 54 is 2 points off: beyond 3 % of 52 (1.56) but within ncu's spread
        self.assertEqual((by[p3]["result"], by[p3]["basis"]), ("PASS", "noise"))
        self.assertEqual(s, {"launches": 1, "values": 5, "pass_target": 2, "pass_noise": 1, "fail": 2, "missing": 0,
                             "ncu_self_beyond": 3, "only_gpuscope": [], "only_ncu": []})

    def test_one_round_no_noise_and_unmatched(self):
        m = "dram__bytes_read.sum"
        rows, s = ks.compare_set([m], [[launch("a", **{m: 5e6}), launch("b", **{m: 1.0})]],
                                 [[launch("a", **{m: 5e6}), launch("c", **{m: 1.0})]])
        self.assertEqual([r["launch"] for r in rows], ["a#0"])
        self.assertEqual((s["only_gpuscope"], s["only_ncu"]), (["b#0"], ["c#0"]))
        # one round: no spread, so ncu is never said to differ from itself
        self.assertFalse(rows[0]["ncu_self_beyond"])
        # a round where a tool failed contributes nothing; a metric one side lacks is missing
        rows, s = ks.compare_set([m, "x.sum"], [[], [launch("a", **{m: 5e6})]], [[launch("a", **{m: 5e6})]])
        self.assertEqual((s["pass_target"], s["missing"]), (1, 1))

    def test_commands(self):
        prog = ks.program("bench_copy", "/b", "py", 0)
        gs = ks.gs_command("/b/bin/gpuscope", prog, "sol", "/o/x", "none")
        self.assertEqual(gs[gs.index("--set") + 1], "sol")
        self.assertEqual(gs[gs.index("-k") + 1], "copy_vec")
        self.assertEqual(gs[gs.index("--launch-count") + 1], "5")
        self.assertEqual(gs[gs.index("--") + 1:], prog["cmd"])
        ncu = ks.ncu_command("ncu", prog, ["a.sum", "b.pct"])
        self.assertIn("regex:copy_vec", ncu)
        self.assertEqual(ncu[ncu.index("--metrics") + 1], "a.sum,b.pct")
        self.assertEqual(ncu[-len(prog["cmd"]):], prog["cmd"])
        r = ks.program("resnet18", "/b", "py3", 40)
        self.assertEqual(r["cmd"][0], "py3")
        self.assertEqual((r["count"], r["skip"]), (20, 40))
        self.assertIn("--launch-skip", ks.ncu_command("ncu", r, ["a.sum"]))
        self.assertIn("--launch-skip", ks.gs_command("gs", r, "memory", "/o/y", "all"))
        self.assertNotIn("--launch-skip", ks.gs_command("gs", ks.program("kernel_mix", "/b", "py", 40), "sol", "s",
                                                        "none"))
        with self.assertRaises(ValueError):
            ks.program("nope", "/b", "py", 0)


# ---- end to end against fakes -----------------------------------------------------------------

SETS = {"memory": ["gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sector_hit_rate.pct"],
        "compute": ["gpu__time_duration.sum", "sm__inst_executed.sum"]}
FAKE_ENV = {"FAKE_SETS": json.dumps(SETS),
            "FAKE_NCU_KNOWN": ",".join(sorted({m.split(".")[0] for ms in SETS.values() for m in ms}))}


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="kernel-sets-check-test-"))
        self.bin = self.tmp / "build" / "bin"
        self.bin.mkdir(parents=True)
        (self.bin / "fake_common.py").write_text(FAKE_COMMON)
        (self.bin / "fake_kernels_db.py").write_text(FAKE_KERNELS_DB)
        for name, text in (("gpuscope", FAKE_GPUSCOPE), ("ncu", FAKE_NCU), ("kernel_mix", "#!/bin/sh\n")):
            path = self.bin / name
            path.write_text(text)
            path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_check(self, out, env=None, programs="kernel_mix,bench_copy", extra=()):
        cmd = [sys.executable, str(REPO / "validation" / "kernel_sets_check.py"), "--build", str(self.tmp / "build"),
               "--out", str(out), "--ncu", str(self.bin / "ncu"), "--sets", "memory,compute", "--programs", programs,
               "--rounds", "2", "--timeout", "60", *extra]
        env = dict(os.environ, **FAKE_ENV, **(env or {}))
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        return r, (Path(out) / "kernel_sets" / "compare.md").read_text()

    def test_pass(self):
        r, report = self.run_check(self.tmp / "ok")
        self.assertEqual(r.returncode, 0, report + r.stderr[-2000:])
        self.assertIn("| kernel_mix | memory | 8 | 16 | 16 | 0 | 0 | 0 | 0 |", report)
        self.assertIn("| kernel_mix | compute | 8 | 8 | 8 | 0 | 0 | 0 | 0 |", report)
        self.assertIn("| bench_copy | memory | 5 | 10 | 10 | 0 | 0 | 0 | 0 |", report)
        self.assertIn("missing from it: none", report)
        self.assertIn("Result: PASS", report)
        self.assertTrue((self.tmp / "ok" / "kernel_sets" / "kernel_mix-memory-r1.sqlite").exists())
        # validation/kernel_sets_fixture.py turns one round into test_kernel_sets_recorded's file
        fixture = self.tmp / "fixture.json"
        f = subprocess.run([sys.executable, str(REPO / "validation" / "kernel_sets_fixture.py"),
                            str(self.tmp / "ok" / "kernel_sets" / "kernel_mix-memory-r0"), str(fixture),
                            "--what", "fake"], capture_output=True, text=True, timeout=60)
        self.assertEqual(f.returncode, 0, f.stderr)
        doc = json.loads(fixture.read_text())
        self.assertEqual((doc["what"], doc["chip"], len(doc["launches"])), ("fake", "GH100", 8))
        first = doc["launches"][0]
        self.assertEqual(sorted(first), ["block", "dynamic_shared_memory", "grid", "launch_index", "metrics", "name",
                                         "ncu", "passes", "registers_per_thread", "static_shared_memory"])
        self.assertEqual((first["grid"], first["block"], first["registers_per_thread"], first["passes"]),
                         ([4, 1, 1], [256, 1, 1], None, 1))
        self.assertEqual(first["metrics"]["dram__bytes_read.sum"], first["ncu"]["dram__bytes_read.sum"])

    def test_metric_off_and_tool_failing(self):
        r, report = self.run_check(self.tmp / "bad", env={"FAKE_SCALE_dram__bytes_read": "1.05"},
                                   programs="kernel_mix")
        self.assertEqual(r.returncode, 1, report)
        self.assertIn("| kernel_mix | memory | 8 | 16 | 8 | 0 | 8 | 0 | 0 |", report)
        self.assertIn("copy_f4#0 dram__bytes_read.sum: gpuscope", report)
        self.assertIn("(+5.00 %;", report)
        self.assertIn("Result: FAIL", report)
        r, report = self.run_check(self.tmp / "fail", env={"FAKE_GS_FAIL": "1"}, programs="kernel_mix")
        self.assertEqual(r.returncode, 1, report)
        self.assertIn("cuptiProfilerInitialize failed", report)
        self.assertIn("| kernel_mix | memory | 0 | 0 |", report)

    def test_budget(self):
        # A budget already spent by the start-up queries: no program/set runs, each is named.
        r, report = self.run_check(self.tmp / "budget", programs="kernel_mix", extra=("--budget-s", "0.001"))
        self.assertEqual(r.returncode, 1, report)
        self.assertIn("not run within --budget-s 0 s: kernel_mix/memory, kernel_mix/compute", report)
        self.assertNotIn("## kernel_mix, --set memory", report)


if __name__ == "__main__":
    unittest.main(verbosity=2)
