#!/usr/bin/env python3
"""validation/llm_bandwidth_check.py without a GPU: the bytes it reads from a model range's
text, the DRAM bytes it sums per decode step from a `gpuscope kernels` trace, and its
judgement, on hand-built SQLite files holding the tables and columns it reads."""
import importlib.util
import os
import sqlite3
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("llm_bandwidth_check", HERE / "../../../validation/llm_bandwidth_check.py")
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

W = 248_912_640  # GPT-2 small's float16 parameters, bytes
PER_TOKEN = 36_864  # its KV cache per position and sequence: 2 x 12 layers x 768 x 2 bytes


def model_text(held):
    return (f"nn.Module: GPT2LMHeadModel (GPT2LMHeadModel), weight_bytes = {W}, weight_dtype = float16, "
            f"kv_bytes = {held * PER_TOKEN}, kv_tokens = {held}")


class Db:
    def __init__(self, path):
        self.con = sqlite3.connect(path)
        self.con.executescript(
            "CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT);"
            "CREATE TABLE nvtx_events (id INTEGER PRIMARY KEY, pid INTEGER, text_id INTEGER, start_ns INTEGER, "
            "end_ns INTEGER);"
            "CREATE TABLE torch_modules (nvtx_id INTEGER PRIMARY KEY, parent_module INTEGER);"
            "CREATE TABLE kernel_profiles (id INTEGER PRIMARY KEY, pid INTEGER, launch_ns INTEGER);"
            "CREATE TABLE kernel_metrics (profile_id INTEGER, metric_id INTEGER, value REAL);")
        self.strings = {}

    def s(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.con.execute("INSERT INTO strings VALUES (?, ?)", (self.strings[text], text))
        return self.strings[text]

    def nvtx(self, text, start, end, pid=7):
        cur = self.con.execute("INSERT INTO nvtx_events (pid, text_id, start_ns, end_ns) VALUES (?, ?, ?, ?)",
                               (pid, self.s(text), start, end))
        return cur.lastrowid

    def launch(self, t, value, pid=7, metric=check.METRIC):
        cur = self.con.execute("INSERT INTO kernel_profiles (pid, launch_ns) VALUES (?, ?)", (pid, t))
        self.con.execute("INSERT INTO kernel_metrics VALUES (?, ?, ?)", (cur.lastrowid, self.s(metric), value))

    def close(self):
        self.con.commit()
        self.con.close()


class StepBytes(unittest.TestCase):
    def test_dynamic_cache_adds_the_new_tokens_kv(self):
        s = check.step_bytes(model_text(40))
        self.assertEqual(s, {"bytes": W + 41 * PER_TOKEN, "weights": W, "kv": 41 * PER_TOKEN})

    def test_static_cache_is_its_allocation(self):
        s = check.step_bytes(f"nn.Module: M (M), weight_bytes = 100, weight_dtype = float16, kv_bytes = 64, "
                             "kv_static = 1")
        self.assertEqual(s["bytes"], 164)

    def test_no_fields(self):
        self.assertIsNone(check.step_bytes("nn.Module: M (M)"))


class Traces(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "t.sqlite")

    def tearDown(self):
        self.dir.cleanup()

    def test_trace_steps_are_the_last_model_calls(self):
        db = Db(self.path)
        t = 0
        for gen in range(2):  # prefill (empty cache) + 3 decode steps, twice; a submodule call inside each
            for held in (0, 32, 33, 34):
                mid = db.nvtx(model_text(held), t, t + 100)
                db.con.execute("INSERT INTO torch_modules VALUES (?, NULL)", (mid,))
                sub = db.nvtx("nn.Module: transformer (GPT2Model)", t + 1, t + 90)
                db.con.execute("INSERT INTO torch_modules VALUES (?, ?)", (sub, mid))
                t += 1000
        db.close()
        steps = check.trace_steps(self.path, 3)
        self.assertEqual([s["bytes"] for s in steps], [W + h * PER_TOKEN for h in (33, 34, 35)])
        with self.assertRaises(RuntimeError):
            check.trace_steps(self.path, 9)

    def test_dram_bytes_are_summed_per_range(self):
        db = Db(self.path)
        db.launch(50, 1e9)  # before the measured generation: not profiled in reality, outside every range
        for k, (start, end) in enumerate([(100, 200), (300, 400)]):
            db.nvtx(check.RANGE, start, end)
            for i in range(3):
                db.launch(start + 10 * (i + 1), 1e6 * (k + 1))
            db.launch(start + 50, 5.0, metric="gpu__time_duration.sum")  # another metric: left out
        db.nvtx(check.RANGE, 500, 600, pid=8)  # another process's range
        db.close()
        per, count, how, outside = check.kernels_steps(self.path, 2)
        self.assertEqual(per, [3e6, 6e6, 0.0])
        self.assertEqual(count, [3, 3, 0])
        self.assertEqual(outside, 1)
        self.assertIn("per 'llmbw.decode' range (3 ranges)", how)

    def test_without_ranges_the_total_is_shared(self):
        db = Db(self.path)
        db.con.execute("DROP TABLE nvtx_events")
        for i in range(4):
            db.launch(i, 2.5e6)
        db.close()
        per, count, how, _ = check.kernels_steps(self.path, 2)
        self.assertEqual(per, [5e6, 5e6])
        self.assertIn("total / 2 decode steps", how)

    def test_no_profiled_launch_is_an_error(self):
        Db(self.path).close()
        with self.assertRaisesRegex(RuntimeError, "no dram__bytes_read.sum values"):
            check.kernels_steps(self.path, 2)


class Compare(unittest.TestCase):
    trace = [{"bytes": 250e6, "weights": 249e6, "kv": 1e6}, {"bytes": 252e6, "weights": 249e6, "kv": 3e6}]

    def test_within_tolerance(self):
        rec, failures = check.compare("b1", 251.0, self.trace, [255e6, 257e6], 5.0)
        self.assertEqual(failures, [])
        self.assertAlmostEqual(rec["llm_sum_diff_pct"], 100 * (251e6 - 256e6) / 256e6)
        self.assertEqual(len(rec["per_step"]), 2)
        self.assertAlmostEqual(rec["kv_bytes_per_step"], 2e6)

    def test_outside_tolerance_and_disagreeing_summary(self):
        _, failures = check.compare("b8", 240.0, self.trace, [300e6, 300e6], 5.0)
        self.assertEqual(len(failures), 2)
        self.assertIn("differ from the trace's model ranges", failures[0])
        self.assertIn("limit 5.0 %", failures[1])

    def test_missing_summary(self):
        _, failures = check.compare("b1", None, self.trace, [251e6, 251e6], 5.0)
        self.assertIn("no Decode Bytes", failures[0])


# A stand-in gpuscope for the whole run: `trace` writes a trace whose model ranges hold two
# generations (prefill + 3 decode steps each, cache of 32 + k positions), `stats` prints llm_sum's
# JSON with the measured generation's Decode Bytes, `kernels` writes 3 decode ranges of 2
# launches each reading DRAM_PER_STEP bytes. Both write the child's JSON where --child-out says.
FAKE = r"""#!/usr/bin/env python3
import json, sqlite3, sys
W, PER_TOKEN, DRAM = %d, %d, %r
args = sys.argv[1:]
def child_out():
    return args[args.index("--child-out") + 1]
def db(path):
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT);"
                      "CREATE TABLE nvtx_events (id INTEGER PRIMARY KEY, pid INTEGER, text_id INTEGER, "
                      "start_ns INTEGER, end_ns INTEGER);"
                      "CREATE TABLE torch_modules (nvtx_id INTEGER PRIMARY KEY, parent_module INTEGER);"
                      "CREATE TABLE kernel_profiles (id INTEGER PRIMARY KEY, pid INTEGER, launch_ns INTEGER);"
                      "CREATE TABLE kernel_metrics (profile_id INTEGER, metric_id INTEGER, value REAL);")
    return con
def text(held):
    return ("nn.Module: GPT2LMHeadModel (GPT2LMHeadModel), weight_bytes = %%d, weight_dtype = float16, "
            "kv_bytes = %%d, kv_tokens = %%d" %% (W, held * PER_TOKEN, held))
if args[0] == "trace":
    con = db(args[args.index("-o") + 1] + ".sqlite")
    t = 0
    for gen in range(2):
        for held in (0, 32, 33, 34):
            con.execute("INSERT INTO strings (value) VALUES (?)", (text(held),))
            sid = con.execute("SELECT MAX(id) FROM strings").fetchone()[0]
            cur = con.execute("INSERT INTO nvtx_events (pid, text_id, start_ns, end_ns) VALUES (1, ?, ?, ?)",
                              (sid, t, t + 10))
            con.execute("INSERT INTO torch_modules VALUES (?, NULL)", (cur.lastrowid,))
            t += 100
    con.commit()
    json.dump({"model": "hf", "marked_decode_steps": 0}, open(child_out(), "w"))
elif args[0] == "stats":
    mean = sum(W + h * PER_TOKEN for h in (33, 34, 35)) / 3 / 1e6
    cols = ["Generation", "Decode Bytes", "Decode BW", "BW of Ceiling", "SOL TPOT", "TPOT p50"]
    rows = [["1", mean, 1.0, 1.0, 0.1, 7.0], ["2", mean, 1.0, 1.0, 0.1, 7.0], ["all", mean, 1.0, 1.0, 0.1, 7.0]]
    print(json.dumps({"reports": {"llm_sum": {"columns": [{"name": c} for c in cols], "rows": rows,
                                              "notes": [{"text": "decode step 7 ms"}]}}}))
elif args[0] == "kernels":
    assert "--nvtx-include" in args and "dram__bytes_read.sum" in args
    con = db(args[args.index("-o") + 1] + ".sqlite")
    con.execute("INSERT INTO strings VALUES (1, 'llmbw.decode'), (2, 'dram__bytes_read.sum')")
    for k in range(3):
        con.execute("INSERT INTO nvtx_events (pid, text_id, start_ns, end_ns) VALUES (1, 1, ?, ?)",
                    (1000 * k, 1000 * k + 500))
        for i in range(2):
            cur = con.execute("INSERT INTO kernel_profiles (pid, launch_ns) VALUES (1, ?)", (1000 * k + 100 * (i + 1),))
            con.execute("INSERT INTO kernel_metrics VALUES (?, 2, ?)", (cur.lastrowid, DRAM / 2))
    con.commit()
    json.dump({"model": "hf", "marked_decode_steps": 3}, open(child_out(), "w"))
else:
    sys.exit(3)
"""


class Main(unittest.TestCase):
    def test_missing_binary_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(check.main([os.path.join(d, "no-gpuscope"), d]), 2)

    def run_fake(self, dram_per_step):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        fake = Path(d.name) / "gpuscope"
        fake.write_text(FAKE % (W, PER_TOKEN, dram_per_step))
        fake.chmod(0o755)
        saved = check.have_torch
        check.have_torch = lambda: (True, "")
        try:
            rc = check.main([str(fake), d.name + "/out", "--new-tokens", "4", "--timeout", "60"])
        finally:
            check.have_torch = saved
        return rc, (Path(d.name) / "out/llm_bandwidth_check.md").read_text()

    def test_a_whole_run_against_a_stand_in_gpuscope(self):
        per_step = W + 34 * PER_TOKEN  # the trace's mean
        rc, md = self.run_fake(per_step * 1.02)  # the kernels read 2 % more
        self.assertEqual(rc, 0, md)
        self.assertIn("| b1 | hf | 3 | 248.91 | 1.25 | 250.17 | 255.17 | -1.96 % | 2 | per 'llmbw.decode' range (3 ranges) |",
                      md)
        self.assertIn("**PASS**", md)

    def test_a_whole_run_that_misses_the_target(self):
        rc, md = self.run_fake((W + 34 * PER_TOKEN) * 1.2)
        self.assertEqual(rc, 1)
        self.assertIn("limit 5.0 %", md)


if __name__ == "__main__":
    sys.argv[1:] = [a for a in sys.argv[1:] if a.startswith("-")]
    unittest.main()
