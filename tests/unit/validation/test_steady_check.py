#!/usr/bin/env python3
"""validation/steady_check.py without a GPU: its reading and judging on the committed traces.

  - align_steps / own_warmup on hand-made step times;
  - compare() at token level (a generate() loop whose steps gpuscope found per token);
  - gpuscope stats on BUILD/test-data/cnn-pytorch.sqlite (PyTorch steps) and on cnn.sqlite with its
    NVTX ranges removed (iterations found in the GPU work), each against a made-up own clock: one
    that agrees (pass), one 20 % faster (fail), one whose warm-up gpuscope counts as steady (fail);
    top's steady idle share against made-up untraced clocks (within 5 points: pass; 12 off: fail);
  - the whole script (main) against a fake gpuscope whose `trace` runs the program and puts a
    committed trace in place: a program that passes, one whose package is missing (JAX: skipped,
    and why), step_loop not built (skipped), the tables and the exit status; part 2's rounds (the
    pair's order alternating from round to round, the round count in the table, a budget that
    leaves one round of three saying so).

Usage: test_steady_check.py BUILD
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "validation"))
import steady_check as sc  # noqa: E402

FAILS = []


def check(cond, what, got=None):
    print(f"  {'ok  ' if cond else 'FAIL'} {what}" + ("" if got is None else f" (got {got})"))
    if not cond:
        FAILS.append(what)


def write_clock(path, ms, tokens=None, start_ns=1_000_000_000):
    t = start_ns
    lines = [json.dumps({"kind": "start", "end_ns": t})]
    for i, m in enumerate(ms):
        t += int(m * 1e6)
        lines.append(json.dumps({"kind": "step", "i": i, "ms": m, "end_ns": t}))
    for i, m in enumerate(tokens or []):
        lines.append(json.dumps({"kind": "token", "i": i, "call": 0, "ms": m, "end_ns": t}))
    Path(path).write_text("\n".join(lines) + "\n")


def pure():
    print("pure functions")
    check(sc.own_warmup([50, 10, 5, 4, 3.5, 3.3, 3.2, 3.3]) == 3, "own warm-up: leading steps over 1.25 x",
          sc.own_warmup([50, 10, 5, 4, 3.5, 3.3, 3.2, 3.3]))
    check(sc.own_warmup([3.3, 3.2, 3.4, 3.3]) == 0, "own warm-up: none when the first step is not slow")
    prog = [50, 10, 5, 4, 3.5, 5.4, 3.1, 3.35, 3.5, 3.3, 3.0, 3.3, 3.2, 3.3, 3.4]
    walls = [5.417, 3.098, 3.347, 3.509, 3.300, 3.013]
    o, cost = sc.align_steps(walls, prog)
    check(o == 5, "align_steps: a captured stretch found by its slow first step", (o, round(cost, 3)))
    steady = [3.3, 3.31, 3.29, 3.3, 3.32, 3.3, 3.28, 3.3]
    o, _ = sc.align_steps([3.3] * 5, [20.0] + steady)
    check(o == len(steady) + 1 - 5, "align_steps: alike steps end on the program's last step", o)
    # JAX: gpuscope finds two set-up iterations, then the compile step (4.1 s; the program's own clock
    # says 2.0 s, its relative difference 0.51), then 60 steps, one more than the program's 59: the
    # compile steps must be matched (offset -2, cost 3.51) though ending both on the last step
    # (offset -3, cost 4.0) is within 0.5 of it (a run on the H100 picked -3 with a 0.5 window).
    o, cost = sc.align_steps([430.0, 420.0, 4100.0] + [3.0] * 60, [2000.0] + [3.0] * 59)
    check(o == -2, "align_steps: JAX's compile step matched to its own", (o, round(cost, 3)))
    # A generate() loop: 4 calls of 8 tokens; gpuscope found tokens (the first of each call slower).
    tokens = []
    for _ in range(4):
        tokens += [30.0] + [5.0] * 7
    tokens[0] = 400.0
    calls = [400 + 35 + 35, 30 + 35 + 35, 30 + 35 + 35, 30 + 35 + 35]
    clock = {"steps": calls, "tokens": tokens, "start_ns": 0, "step_end_ns": [], "token_end_ns": []}
    steps = [{"step": k, "wall_ms": w * 1.01, "busy_ms": 1.0,
              "state": "warm-up" if k == 0 else ("outlier" if w > 10 else "steady"), "pid": 1}
             for k, w in enumerate(tokens[1:])]
    stats = {"steps": steps, "source": "iterations found in the GPU work", "judged": "judged ...",
             "steady_note": None, "gs_median_ms": 5.05}
    row = sc.compare(stats, clock, 5.0)
    check(row["level"] == "token", "generate: the token level matches gpuscope's steps", row.get("level"))
    check(row["status"] == "pass" and abs(row["err_pct"] - 1.0) < 0.01, "generate: +1 % at token level passes",
          (row["status"], row.get("err_pct"), row.get("why")))
    check(row["own_warmup"] == 1, "generate: the own warm-up is the first (cold) token", row.get("own_warmup"))


def prices(tmp):
    """tracer_prices on a hand-built trace: three steps of pid 7, steps 2 and 3 steady; another process's
    calls and the warm-up step's are left out."""
    print("what the trace prices a step at")
    db = tmp / "prices.sqlite"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE meta (key TEXT, value TEXT);
        CREATE TABLE torch_steps (pid INTEGER, step INTEGER, start_ns INTEGER, end_ns INTEGER);
        CREATE TABLE api_calls (pid INTEGER, start_ns INTEGER, correlation_id INTEGER);
        CREATE TABLE kernels (pid INTEGER, correlation_id INTEGER);
        CREATE TABLE nvtx_events (id INTEGER PRIMARY KEY, start_ns INTEGER);
        CREATE TABLE torch_ops (nvtx_id INTEGER, pid INTEGER);
        CREATE TABLE torch_modules (nvtx_id INTEGER, pid INTEGER);
        INSERT INTO meta VALUES ('tracer_launch_cost_ns', '1000'), ('tracer_api_cost_ns', '500'),
            ('tracer_torch_op_cost_ns', '300'), ('tracer_torch_module_cost_ns', '200'), ('host', 'h');
        INSERT INTO torch_steps VALUES (7, 1, 1000, 2000), (7, 2, 2000, 3000), (7, 3, 3000, 4000), (8, 2, 0, 9000);
        -- step 1: one launch (warm-up); step 2: launches 1, 2 and a copy (3, no kernel); step 3: launches 4-6
        INSERT INTO api_calls VALUES (7, 1100, 0), (7, 2100, 1), (7, 2200, 2), (7, 2300, 3),
            (7, 3100, 4), (7, 3200, 5), (7, 3300, 6), (8, 2150, 9);
        INSERT INTO kernels VALUES (7, 0), (7, 1), (7, 2), (7, 4), (7, 5), (7, 6), (8, 9), (8, 3);
        INSERT INTO nvtx_events VALUES (1, 2050), (2, 2110), (3, 2120), (4, 3010), (5, 2001), (6, 3001),
            (7, 3002), (8, 2500), (9, 1500);
        -- operators: three in step 2, one in step 3, one of pid 8, one in the warm-up step; modules 1 / 2
        INSERT INTO torch_ops VALUES (1, 7), (2, 7), (3, 7), (4, 7), (8, 8), (9, 7);
        INSERT INTO torch_modules VALUES (5, 7), (6, 7), (7, 7);
    """)
    con.commit()
    con.close()
    p = sc.tracer_prices(db, 7, [2, 3])
    # step 2: 2 x 1000 + 1 x 500 + 3 x 300 + 1 x 200 = 3,600 ns; step 3: 3 x 1000 + 1 x 300 + 2 x 200 = 3,700 ns
    check(p is not None and abs(p["priced_ms"] - 0.0037) < 1e-12 and p["priced_steps"] == 2,
          "prices: the upper median of 3,600 and 3,700 ns a step", p)
    check(p and (p["launches"], p["other_calls"], p["ops"], p["modules"]) == (3, 1, 3, 2),
          "prices: median counts a step (launches 2/3, other calls 1/0, operators 3/1, modules 1/2)", p)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM meta WHERE key = 'tracer_torch_module_cost_ns'")
    con.commit()
    con.close()
    p = sc.tracer_prices(db, 7, [2, 3])
    check(p and abs(p["priced_ms"] - 0.0034) < 1e-12 and p["prices_ns"]["modules"] == 0.0,
          "prices: a price the trace lacks counts 0 (3,400 and 3,300 ns)", p)
    check(sc.tracer_prices(db, 7, [5]) is None and sc.tracer_prices(tmp / "gone.sqlite", 7, [2]) is None,
          "prices: none for steps the trace lacks or a trace that is gone")
    x = sc.round_summary({"round": 2, "traced_first": True, "untraced_ms": 6.0, "traced_own_ms": 8.5,
                          "prices": {"priced_ms": 1.5, "launches": 370, "other_calls": 16, "ops": 997,
                                     "modules": 77, "prices_ns": {}}})
    check(x["added_ms"] == 2.5 and x["priced_ms"] == 1.5 and x["counts"]["ops"] == 997,
          "round summary: 2.5 ms added against 1.5 priced", x)


def with_traces(build, tmp):
    gs = build / "bin" / "gpuscope"
    print("committed traces")
    shutil.copy(build / "test-data" / "cnn-pytorch.sqlite", tmp / "cnn-pytorch.sqlite")
    st = sc.gpuscope_stats(gs, tmp / "cnn-pytorch.sqlite", 539)
    check((tmp / "cnn-pytorch.stats.json").exists(), "the stats JSON kept beside the trace")
    check(st["source"] == "PyTorch training steps", "cnn-pytorch: steps from the optimizer marks", st["source"])
    check(st["judged"] and st["judged"].startswith("judged the steady state"), "cnn-pytorch: the judged window line")
    check(abs(st["gs_median_ms"] - 3.386976) < 1e-6, "cnn-pytorch: gpuscope's steady median", st["gs_median_ms"])
    check(st["idle_untraced_pct"] is not None and 80 <= st["idle_untraced_pct"] <= 95,
          "cnn-pytorch: top's idle share without gpuscope's cost", st["idle_untraced_pct"])
    own = [6080.5, 4.5, 3.52, 3.40, 3.31, 3.28]
    write_clock(tmp / "a.jsonl", own)
    row = sc.compare(st, sc.read_clock(tmp / "a.jsonl"), 5.0)
    check(row["status"] == "pass", "cnn-pytorch, an agreeing clock: pass", row.get("why"))
    check(row["method"].startswith("by optimizer.step() number"), "cnn-pytorch: matched by step number")
    check(row["own_warmup"] == 2 and row["first_steady_own_step"] == 2 and row["warmup_left_out"],
          "cnn-pytorch: 2 own warm-up steps, first steady step 2", (row["own_warmup"], row["first_steady_own_step"]))
    check(abs(row["own_median_same_ms"] - 3.40) < 1e-9, "cnn-pytorch: own (upper) median over steps 2-5",
          row["own_median_same_ms"])
    write_clock(tmp / "b.jsonl", [m * 0.8 for m in own])
    row = sc.compare(st, sc.read_clock(tmp / "b.jsonl"), 5.0)
    check(row["status"] == "fail" and "limit 5.0 %" in row["why"], "cnn-pytorch, a clock 20 % faster: fail",
          row.get("why"))
    write_clock(tmp / "c.jsonl", [6080.5, 4.5, 9.0, 3.40, 3.31, 3.28])
    row = sc.compare(st, sc.read_clock(tmp / "c.jsonl"), 5.0)
    check(row["status"] == "fail" and "warm-up not left out" in row["why"],
          "cnn-pytorch, an own warm-up step gpuscope calls steady: fail", row.get("why"))

    # Part 2: the steady idle share against an untraced clock (busy per step: 0.3499 ms).
    write_clock(tmp / "u.jsonl", [100.0, 3.0, 3.0, 3.1, 3.0, 3.05, 3.0, 3.0])
    row = sc.compare_idle(st, sc.read_clock(tmp / "u.jsonl"), 5.0, sc.read_clock(tmp / "a.jsonl"))
    check(row["status"] == "pass" and abs(row["untraced_idle_pct"] - 88.32) < 0.05 and row["untraced_warmup"] == 1,
          "idle: 89 % vs the untraced 88.3 % passes", (row.get("untraced_idle_pct"), row.get("diff_points")))
    check(row["traced_own_ms"] == 3.40, "idle: the traced program's own step beside", row.get("traced_own_ms"))
    write_clock(tmp / "v.jsonl", [100.0] + [1.5] * 7)
    row = sc.compare_idle(st, sc.read_clock(tmp / "v.jsonl"), 5.0)
    check(row["status"] == "fail" and "limit 5.0" in row["why"], "idle: 89 % vs the untraced 76.7 % fails",
          row.get("why"))
    # Several rounds: the medians decide, so one untraced run 2x faster than the others does not.
    rows = [sc.compare_idle(st, sc.read_clock(tmp / name), 5.0) for name in ("u.jsonl", "v.jsonl", "u.jsonl")]
    row = sc.combine_idle_rounds(rows, 5.0)
    check(row["status"] == "pass" and row["rounds"] == 3 and abs(row["untraced_idle_pct"] - 88.32) < 0.05,
          "idle, 3 rounds, one outlier: the medians pass", (row.get("untraced_idle_pct"), row.get("why")))
    check("medians of 3 rounds" in sc._rounds_text(row), "idle, 3 rounds: the table says so", sc._rounds_text(row))
    row = sc.combine_idle_rounds([rows[1], rows[1], rows[0]], 5.0)
    check(row["status"] == "fail" and "medians of 3 rounds" in row["why"], "idle, 3 rounds, two 2x faster: fail",
          row.get("why"))

    # The iterations path: the cnn capture without its NVTX ranges.
    db = tmp / "cnn-nonvtx.sqlite"
    shutil.copy(build / "test-data" / "cnn.sqlite", db)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM nvtx_events")
    con.commit()
    con.close()
    st = sc.gpuscope_stats(gs, db)
    check(st["source"] == "iterations found in the GPU work", "cnn without NVTX: iterations found", st["source"])
    write_clock(tmp / "d.jsonl", [50, 10, 5, 4, 3.5, 5.43, 3.09, 3.36, 3.5, 3.31, 3.02, 3.3, 3.2, 3.3, 3.4])
    row = sc.compare(st, sc.read_clock(tmp / "d.jsonl"), 5.0)
    check(row["status"] == "pass" and row["method"].startswith("by the sequence of step times (offset +5"),
          "cnn without NVTX: matched at step 5, pass", (row.get("method"), row.get("why")))
    check(row["first_steady_own_step"] == 6 and row["own_warmup"] == 3, "cnn without NVTX: warm-up left out",
          (row["first_steady_own_step"], row["own_warmup"]))
    return st


def fake_run(build, tmp):
    print("the whole script against a fake gpuscope")
    fake = tmp / "fakebuild"
    (fake / "bin").mkdir(parents=True)
    traces = tmp / "canned"
    traces.mkdir()
    shutil.copy(build / "test-data" / "cnn-pytorch.sqlite", traces / "resnet18.sqlite")
    real = build / "bin" / "gpuscope"
    # trace: runs the program, then puts the canned trace where -o names it; stats: the real one.
    (fake / "bin" / "gpuscope").write_text(f"""#!/usr/bin/env python3
import os, shutil, subprocess, sys
a = sys.argv[1:]
if a[0] != "trace":
    os.execv({str(real)!r}, [{str(real)!r}] + a)
out = a[a.index("-o") + 1]
cmd = a[a.index("--") + 1:]
r = subprocess.run(cmd)
name = os.path.basename(out).split(".")[0]
canned = os.path.join({str(traces)!r}, name + ".sqlite")
if r.returncode == 0 and os.path.exists(canned):
    shutil.copy(canned, out + ".sqlite")
sys.exit(r.returncode)
""")
    # python: resnet18 writes a clock that agrees with the canned trace; the others run for real
    # (steady_programs.py exits 77 without torch or JAX).
    clock_lines = (tmp / "a.jsonl").read_text()
    (fake / "python").write_text(f"""#!/usr/bin/env python3
import os, sys
if sys.argv[2] == "resnet18":
    open(os.environ["GPUSCOPE_STEADY_CLOCK"], "w").write({clock_lines!r})
    print("RESULT program=resnet18 steps=6 median_ms=3.3 first_ms=6080.5 pid=539")
    sys.exit(0)
os.execv({sys.executable!r}, [{sys.executable!r}] + sys.argv[1:])
""")
    for f in (fake / "bin" / "gpuscope", fake / "python"):
        f.chmod(0o755)
    out = tmp / "out"
    r = subprocess.run([sys.executable, str(REPO / "validation" / "steady_check.py"), "--build", str(fake), "--out",
                        str(out), "--programs", "cpp,resnet18,jax", "--no-idle", "--python", str(fake / "python")],
                       capture_output=True, text=True, timeout=120)
    print("\n".join("    " + ln for ln in r.stdout.splitlines()[-14:]))
    if r.stderr.strip():
        print("    stderr: " + r.stderr.strip()[-1500:])
    check(r.returncode == 1, "exit 1 with skipped rows (no --allow-skip)", r.returncode)
    check((out / "steady_work" / "resnet18.stats.json").exists(), "the work folder keeps the stats JSON")
    doc = json.loads((out / "steady_check.json").read_text())
    rows = {x["program"]: x for x in doc["steady"]}
    check(rows["resnet18"]["status"] == "pass", "resnet18 row passes", rows["resnet18"].get("why"))
    check(rows["jax"]["status"] == "skipped" and "needs JAX" in rows["jax"]["why"], "jax row: skipped, needs JAX",
          rows["jax"].get("why"))
    check(rows["cpp"]["status"] == "skipped" and "step_loop is not built" in rows["cpp"]["why"],
          "cpp row: skipped, step_loop not built", rows["cpp"].get("why"))
    md = (out / "steady_check.md").read_text()
    check("| resnet18 | 3.400 | 3.387 | -0.38 % |" in md, "the table's resnet18 row", md.splitlines()[6:8])
    (out / "steady_work" / "resnet18.sqlite").unlink()  # as the work folder travels back: without traces
    r = subprocess.run([sys.executable, str(REPO / "validation" / "steady_check.py"), "--build", str(fake), "--out",
                        str(out), "--programs", "resnet18", "--no-idle", "--analyze-only"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and "| resnet18 | 3.400 | 3.387 | -0.38 % |" in (out / "steady_check.md").read_text(),
          "--analyze-only reads the work folder again, the trace gone (its stats JSON): exit 0, same row",
          r.stderr.strip()[-300:])
    r = subprocess.run([sys.executable, str(REPO / "validation" / "steady_check.py"), "--build", str(tmp / "none"),
                        "--out", str(out)], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "no gpuscope binary" in r.stderr, "no gpuscope binary: exit 2 and why",
          r.stderr.strip())
    idle_run(fake, tmp)


def idle_run(fake, tmp):
    """Part 2 against the fake: rounds alternate the pair's order, the table counts the rounds, and a
    budget that leaves one round of three says so."""
    def steady_check(out, *extra):
        return subprocess.run([sys.executable, str(REPO / "validation" / "steady_check.py"), "--build", str(fake),
                               "--out", str(out), "--programs", "resnet18", "--python", str(fake / "python"),
                               "--idle-rounds", "3", *extra], capture_output=True, text=True, timeout=300)
    out = tmp / "idle3"
    r = steady_check(out)
    runs = [ln.split(":")[0].strip() for ln in r.stdout.splitlines() if ln.startswith("  resnet18")]
    check(runs == ["resnet18", "resnet18.untraced", "resnet18.opsmod", "resnet18.opsmod.r2", "resnet18.untraced.r2",
                   "resnet18.untraced.r3", "resnet18.opsmod.r3"],
          "idle: three rounds, the pair's order alternating", runs)
    doc = json.loads((out / "steady_check.json").read_text())
    row = doc["idle"][0]
    check(row.get("rounds") == 3 and len(row.get("round_diffs", [])) == 3 and "diff_points" in row,
          "idle: one row of three rounds", {k: row.get(k) for k in ("rounds", "round_diffs", "why")})
    md = (out / "steady_check.md").read_text()
    check("medians of 3 rounds (each:" in md and "asked" not in md, "idle: the table says three rounds", md[-900:])
    each = [ln for ln in md.splitlines() if ln.startswith("| resnet18 | ") and "first)" in ln]
    check([ln.split(" | ")[1] for ln in each] == ["1 (untraced first)", "2 (traced first)", "3 (untraced first)"]
          and all(" | 0.066 | 51 / 4 / 187 / 11 | 1265 / 260 / 0 / 0 | " in ln for ln in each),
          "idle: a line a round, with the committed trace's prices (51 launches x 1,265 ns + 4 calls x 260 ns)",
          each)
    # A budget that leaves room for one round only (a later round needs 2 x --min-run-s left).
    out = tmp / "idle1"
    r = steady_check(out, "--budget-s", "199", "--min-run-s", "100")
    row = json.loads((out / "steady_check.json").read_text())["idle"][0]
    md = (out / "steady_check.md").read_text()
    check(row.get("rounds") == 1 and "one round (1 of 3 asked: the budget ran out)" in md,
          "idle: one round of three asked, and the table says so", (row.get("rounds"), md[-600:], r.stderr[-300:]))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    build = Path(sys.argv[1]).resolve()
    for need in (build / "bin" / "gpuscope", build / "test-data" / "cnn-pytorch.sqlite",
                 build / "test-data" / "cnn.sqlite"):
        if not need.exists():
            print(f"FAIL: {need} not found (build gpuscope and test_traces first)")
            return 1
    tmp = Path(tempfile.mkdtemp(prefix="steady-check-test-"))
    try:
        pure()
        prices(tmp)
        with_traces(build, tmp)
        fake_run(build, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'FAIL: ' + '; '.join(FAILS) if FAILS else 'all checks passed'}")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
