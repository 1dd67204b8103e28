#!/usr/bin/env python3
"""session_windows: does every capture window of `gpuscope launch --session` get its kernels?

A diagnostic for the gpu_session failure seen once on a 2-GPU machine (window 2 held 112k
API calls and 0 kernels; no CUPTI error on stderr, no data_loss row, and the trace written at
exit had no kernel of window 2 either). Runs `launch_loop N` under `gpuscope launch --session`
and opens --windows short windows one after the other (start, wait --window-s, stop
--no-trace, wait --gap-s), once per variant:
  both_gpus   the environment as given (every GPU visible)
  one_gpu     CUDA_VISIBLE_DEVICES=0 (is the second GPU part of it?)
  cupti_zero  GPUSCOPE_ZERO_BUFFERS=0 (CUPTI clears each activity buffer itself)
From each variant's final trace it prints, per window: launch API calls started inside it and
the kernels launched by them (joined on correlation id), the kernels that started inside it
(by timestamp: a clock problem shows as a difference), CUPTI's overhead records (buffer
requests: CUPTI was recording something) and the API names recorded, then the trace's messages and
data_loss rows and the collector's lines on stderr. A window is LOST when it holds more than
1000 launches and under 99 % of their kernels; the pattern (one window, or every window after
the first lost one) tells a one-off from a CUPTI state that stays broken.

Usage: session_windows.py --build BUILD [--variants both_gpus,one_gpu] [--windows 8]
       [--window-s 0.25] [--gap-s 0.3] [--launches 4000000] [--out DIR]
Exit 1 when a window is LOST, 2 on a run error. About 15 s per variant on an H100.
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VARIANTS = {"both_gpus": {}, "one_gpu": {"CUDA_VISIBLE_DEVICES": "0"}, "cupti_zero": {"GPUSCOPE_ZERO_BUFFERS": "0"}}


def run_variant(args, build, scratch, variant):
    gs = str(build / "bin" / "gpuscope")
    name = f"windows-{os.getpid()}-{variant}"
    out = scratch / f"{variant}.sqlite"
    env = dict(os.environ, GPUSCOPE_SESSIONS_DIR=str(scratch / "sessions"), **VARIANTS[variant])
    err_path = scratch / f"{variant}.stderr"
    with open(err_path, "w") as err:
        launcher = subprocess.Popen([gs, "launch", "--session", name, "-o", str(out), "--force-overwrite",
                                     "--calibrate=never", "-q", "--", str(build / "bin" / "launch_loop"),
                                     str(args.launches)], env=env, stdout=subprocess.DEVNULL, stderr=err)

    def cli(*argv):
        return subprocess.run([gs, *argv], env=env, capture_output=True, text=True, timeout=120)

    deadline = time.time() + 60
    while time.time() < deadline and name not in cli("sessions").stdout:
        time.sleep(0.2)
    time.sleep(1.0)  # the program is in its loop
    opened = 0
    for _ in range(args.windows):
        if launcher.poll() is not None:
            break
        r = cli("start", name)
        if r.returncode != 0:
            print(f"  start failed: {r.stderr.strip()}")
            break
        opened += 1
        time.sleep(args.window_s)
        r = cli("stop", name, "--no-trace")
        if r.returncode != 0:
            print(f"  stop failed: {r.stderr.strip()}")
            break
        time.sleep(args.gap_s)
    launcher.wait(timeout=600)
    print(f"\n{variant}: {opened} windows opened; gpuscope launch exit {launcher.returncode}")
    if not out.exists():
        print(f"  no trace written; stderr:\n{err_path.read_text()[-3000:]}")
        return None
    con = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    windows = con.execute("SELECT pid, start_ns, end_ns FROM capture_windows ORDER BY start_ns").fetchall()
    print("  window   ms     launches   kernels   kernels/launches   kernels by start"
          "   CUPTI overhead rows   API names")
    lost = []
    for i, (pid, start, end) in enumerate(windows, 1):
        launches = con.execute("SELECT COUNT(*) FROM v_api_calls WHERE pid = ? AND start_ns >= ? AND start_ns < ? "
                               "AND name LIKE '%Launch%'", (pid, start, end)).fetchone()[0]
        kernels = con.execute("SELECT COUNT(*) FROM kernels k JOIN api_calls a ON a.pid = k.pid AND "
                              "a.correlation_id = k.correlation_id WHERE k.pid = ? AND a.start_ns >= ? AND "
                              "a.start_ns < ?", (pid, start, end)).fetchone()[0]
        overheads = con.execute("SELECT COUNT(*) FROM overheads WHERE pid = ? AND start_ns >= ? AND start_ns < ?",
                                (pid, start, end)).fetchone()[0]
        by_time = con.execute("SELECT COUNT(*) FROM kernels WHERE pid = ? AND start_ns >= ? AND start_ns < ?",
                              (pid, start, end)).fetchone()[0]
        names = con.execute("SELECT name, COUNT(*) FROM v_api_calls WHERE pid = ? AND start_ns >= ? AND start_ns < ? "
                            "GROUP BY name ORDER BY 2 DESC LIMIT 3", (pid, start, end)).fetchall()
        bad = launches > 1000 and kernels < 0.99 * launches
        if bad:
            lost.append(i)
        ratio = kernels / launches if launches else float("nan")
        api_names = ", ".join(f"{n} {c}" for n, c in names)
        print(f"  {i:6d} {(end - start) / 1e6:6.0f} {launches:10d} {kernels:9d}   {ratio:8.4f}   {by_time:16d}"
              f"   {overheads:19d}   {api_names}{'   LOST' if bad else ''}")
    for table in ("messages", "data_loss"):
        rows = con.execute(f"SELECT * FROM {table}").fetchall()
        print(f"  {table}: {len(rows)} row(s)" + "".join(f"\n    {r}" for r in rows[:20]))
    collector_lines = [line for line in err_path.read_text().splitlines() if line.startswith("gpuscope: ")]
    print(f"  collector lines on stderr: {len(collector_lines)}" + "".join(f"\n    {x}" for x in collector_lines[:20]))
    if lost:
        persistent = lost == list(range(lost[0], len(windows) + 1))
        print(f"  LOST windows {lost}: " + ("every window from the first lost one on (a state that stays broken)"
                                            if persistent else "isolated"))
    return lost


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--variants", default="both_gpus,one_gpu")
    ap.add_argument("--windows", type=int, default=8)
    ap.add_argument("--window-s", type=float, default=0.25)
    ap.add_argument("--gap-s", type=float, default=0.3)
    ap.add_argument("--launches", type=int, default=4_000_000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    build = Path(args.build).resolve()
    scratch = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="gpuscope-session-windows-"))
    scratch.mkdir(parents=True, exist_ok=True)
    any_lost, error = False, False
    for variant in args.variants.split(","):
        if variant not in VARIANTS:
            print(f"session_windows: unknown variant '{variant}' (known: {', '.join(VARIANTS)})")
            return 2
        lost = run_variant(args, build, scratch, variant)
        error |= lost is None
        any_lost |= bool(lost)
    print(f"\nsession_windows: files in {scratch}")
    return 2 if error else 1 if any_lost else 0


if __name__ == "__main__":
    sys.exit(main())
