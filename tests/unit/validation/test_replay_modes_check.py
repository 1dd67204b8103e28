#!/usr/bin/env python3
"""CPU tests of validation/replay_modes_check.py (no GPU): the per-launch differences between
replay modes and the per-launch cost on hand-made values, and one run against the fake
gpuscope and kernel_mix of test_kernels_check.py.
Usage: python3 test_replay_modes_check.py (exit 0 when all pass)."""
import json
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
import replay_modes_check as rm  # noqa: E402
from test_kernels_check import FAKE_COMMON, FAKE_GPUSCOPE, FAKE_KERNEL_MIX, FAKE_KERNELS_DB  # noqa: E402


def launch(name, inst, warps, ns, stores):
    return {"name": name, "metrics": {rm.INST: inst, rm.WARPS: warps, rm.TIME: ns, rm.STORES: stores}}


class Arithmetic(unittest.TestCase):
    def test_added_per_warp_against_kernel_replay(self):
        kernel = [[launch("a", 10000, 100, 5000, 0), launch("b", 64, 1, 2400, 1)],
                  [launch("a", 10000, 100, 5200, 0), launch("b", 64, 1, 2400, 1)]]
        user = [[launch("a", 10800, 100, 5600, 1), launch("b", 77, 1, 3000, 2)],
                [launch("a", 10800, 100, 5800, 1), launch("b", 77, 1, 3100, 2)]]
        app = [[launch("a", 10000, 100, 5100, 0)], []]  # a failed round adds nothing; b missing
        rows = rm.compare_modes({"kernel": kernel, "user": user, "application": app})
        got = {(r["mode"], r["launch"]): r for r in rows}
        self.assertEqual(sorted(got), [("application", "a#0"), ("user", "a#0"), ("user", "b#0")])
        a = got[("user", "a#0")]
        self.assertEqual((a["warps"], a["inst_per_warp_added"], a["store_requests_added"]), (100, 8.0, 1))
        self.assertEqual(a["duration_added_ns"], 5700 - 5100)  # medians of both rounds
        self.assertEqual(got[("user", "b#0")]["inst_per_warp_added"], 13.0)
        self.assertEqual(got[("application", "a#0")]["inst_per_warp_added"], 0.0)
        rows = rm.compare_modes({"kernel": kernel, "user": [[{"name": "a", "metrics": {rm.INST: 1.0}}]]})
        # the warp count is kernel replay's; a metric one side lacks gives no difference
        self.assertAlmostEqual(rows[0]["inst_per_warp_added"], (1 - 10000) / 100)
        self.assertIsNone(rows[0]["duration_added_ns"])

    def test_cost(self):
        cost = rm.per_launch_cost({"kernel": [6.0, 6.4, 6.2], "user": [1.2], "application": []}, [0.4, 0.6], 200)
        self.assertAlmostEqual(cost["kernel"][1], (6.2 - 0.5) / 200)
        self.assertAlmostEqual(cost["user"][1], (1.2 - 0.5) / 200)
        self.assertEqual(cost["application"], (None, None))
        self.assertEqual(rm.per_launch_cost({"kernel": [1.0]}, [], 200)["kernel"], (1.0, None))


class EndToEnd(unittest.TestCase):
    def test_fake_run(self):
        tmp = Path(tempfile.mkdtemp(prefix="replay-modes-test-"))
        try:
            bin_dir = tmp / "build" / "bin"
            bin_dir.mkdir(parents=True)
            (bin_dir / "fake_common.py").write_text(FAKE_COMMON)
            (bin_dir / "fake_kernels_db.py").write_text(FAKE_KERNELS_DB)
            for name, text in (("gpuscope", FAKE_GPUSCOPE), ("kernel_mix", FAKE_KERNEL_MIX)):
                (bin_dir / name).write_text(text)
                (bin_dir / name).chmod((bin_dir / name).stat().st_mode | stat.S_IXUSR)
            r = subprocess.run([sys.executable, str(REPO / "validation" / "replay_modes_check.py"), "--build",
                                str(tmp / "build"), "--out", str(tmp / "out"), "--rounds", "1"],
                               capture_output=True, text=True, timeout=120)
            md = (tmp / "out" / "replay_modes.md").read_text()
            self.assertEqual(r.returncode, 0, md + r.stderr[-2000:])
            # The fakes count the same in every mode: 8 launches x 3 modes, nothing added.
            rows = json.loads((tmp / "out" / "replay_modes.json").read_text())["rows"]
            self.assertEqual(len(rows), 24)
            self.assertTrue(all(x["inst_per_warp_added"] == 0 and x["duration_added_ns"] == 0 for x in rows))
            self.assertIn("| copy_f4#0 |", md)
            self.assertIn("| application |", md)
            self.assertIn("| userrange |", md)
            self.assertIn("Result: all runs succeeded", md)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
