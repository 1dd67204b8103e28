"""validation/python_sampling_check.py without a GPU: line_share() on a hand-built trace.

Steps 0..2 over [0, 100), [100, 200), [200, 300) ns; kernels [50, 60), [150, 160), [250, 260) and
a device-to-host copy [290, 295), so the steady window [100, 300] (the steps after the first) has
the idle gaps [100, 150), [160, 250), [260, 290), [295, 300). The main thread (tid 42 = pid) is
sampled at 80 (before the window), 120, 155 (inside a kernel), 170, 200 and 270; thread 43 at 120.
Three of the four samples in the gaps are at slow_loader.py:23 (one through a torch frame inside
it), one at slow_loader.py:45: share 3/4. One .item() at line 50 (its copy) and one synchronize
there without a copy: 1 item call, 2 calls with a stack.
"""
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "validation"))
import python_sampling_check as check  # noqa: E402

SCHEMA = """
CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE torch_steps (pid INTEGER, step INTEGER, start_ns INTEGER, end_ns INTEGER);
CREATE TABLE kernels (start_ns INTEGER, end_ns INTEGER);
CREATE TABLE memcpys (pid INTEGER, correlation_id INTEGER, start_ns INTEGER, end_ns INTEGER, copy_kind TEXT);
CREATE TABLE memsets (start_ns INTEGER, end_ns INTEGER);
CREATE TABLE py_frames (id INTEGER PRIMARY KEY, file_id INTEGER, line INTEGER);
CREATE TABLE py_stacks (id INTEGER PRIMARY KEY, parent_id INTEGER, frame_id INTEGER);
CREATE TABLE py_samples (tid INTEGER, ts_ns INTEGER, py_stack_id INTEGER);
CREATE TABLE api_calls (pid INTEGER, correlation_id INTEGER, py_stack_id INTEGER);
CREATE TABLE data_loss (what TEXT, count INTEGER);
"""


def build():
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO strings VALUES (?, ?)", [(1, "/work/examples/pytorch/slow_loader.py"),
                                                         (2, "/venv/torch/_tensor.py")])
    db.executemany("INSERT INTO torch_steps VALUES (42, ?, ?, ?)", [(0, 0, 100), (1, 100, 200), (2, 200, 300)])
    db.executemany("INSERT INTO kernels VALUES (?, ?)", [(50, 60), (150, 160), (250, 260)])
    db.execute("INSERT INTO memcpys VALUES (42, 7, 290, 295, 'DtoH')")
    # Frames: 1 slow_loader.py:23, 2 slow_loader.py:45, 3 slow_loader.py:50, 4 _tensor.py:5, 5 slow_loader.py:62
    db.executemany("INSERT INTO py_frames VALUES (?, ?, ?)", [(1, 1, 23), (2, 1, 45), (3, 1, 50), (4, 2, 5), (5, 1, 62)])
    # Stacks: 10 <module>:62; 11 :23 <- 10; 12 :45 <- 10; 13 _tensor:5 <- 11; 14 :50 <- 10
    db.executemany("INSERT INTO py_stacks VALUES (?, ?, ?)",
                   [(10, None, 5), (11, 10, 1), (12, 10, 2), (13, 11, 4), (14, 10, 3)])
    db.executemany("INSERT INTO py_samples VALUES (?, ?, ?)",
                   [(42, 80, 11), (42, 120, 11), (42, 155, 11), (42, 170, 13), (42, 200, 12), (42, 270, 11),
                    (43, 120, 12)])
    db.executemany("INSERT INTO api_calls VALUES (42, ?, ?)", [(7, 14), (8, 14), (9, None)])
    db.execute("INSERT INTO data_loss VALUES ('py_stacks_torn', 1)")
    return db


def main():
    failures = []
    r = check.line_share(build(), 42, 23, 50)
    want = {"gaps": 4, "samples": 7, "samples_in_gaps": 4, "at_load_line": 3, "share": 0.75, "steady_ns": 200,
            "item_calls_at_line": 1, "calls_with_stack": 2, "losses": {"py_stacks_torn": 1}}
    for key, value in want.items():
        if r.get(key) != value:
            failures.append(f"{key}: {r.get(key)!r}, want {value!r}")
    empty = build()
    empty.execute("DELETE FROM torch_steps")
    if "error" not in check.line_share(empty, 42, 23, 50):
        failures.append("a trace without torch_steps must be an error")
    for f in failures:
        print("FAIL:", f)
    print(f"python_sampling_check: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
