#!/usr/bin/env python3
"""GPU test: gpuscope launch --session / start / stop / sessions on a running program.

Runs `launch_loop N` (a launch-bound loop of tiny kernels, many seconds) under
`gpuscope launch --session`, and from this script, while it runs: `gpuscope sessions` (the
session is listed, not recording), then five windows: `start` + `stop` (window 1),
`start --duration 0.5` (window 2), and `start` + `stop` three more times; each stop writes the
windows so far as NAME.wK.sqlite. Then waits for the program's end. Pass when: the program's
counter is right; wK holds K windows and the final trace 5, reason 'session'; in every trace,
each window holds exactly the kernels launched inside it: every launch call recorded in the
window (more than 1000 of them) has its kernel, no kernel was launched outside the windows,
and a window's kernel count is the same in every trace that holds it (window 2 once lost all
its kernels while its API calls were recorded: kernel records turned off after window 1 and on
again never came back, H200 and 2 x H100); kernels grow from w1 to w5, the final trace holds
as many as w5, fewer than launched; no data loss is reported for the snapshots of processes
still running; start while recording and stop while stopped fail with a clear message.
"""
import os
import subprocess
import sys
import time

import gputest as g

N = 50_000_000  # an upper bound: the test ends the loop with --stop-file once the five windows are written
WINDOWS = 5
LAUNCHES = ("SELECT COUNT(*) FROM v_api_calls WHERE pid = ? AND start_ns >= ? AND start_ns <= ? "
            "AND name LIKE '%Launch%'")


def window_counts(con, w):
    """Launch calls recorded inside window w, and the kernels joined to them."""
    launches = g.scalar(con, LAUNCHES, (w["pid"], w["start_ns"], w["end_ns"]))
    kernels = len(g.kernel_launches_in(con, w["pid"], w["start_ns"], w["end_ns"]))
    return launches, kernels


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("launch --session / start / stop")
    gs = str(g.gpuscope_bin(args.build))
    exe = str(g.example_bin(args.build, "launch_loop"))
    name = f"gputest-{os.getpid()}"
    out = args.scratch / "session"
    env = dict(os.environ, GPUSCOPE_SESSIONS_DIR=str(args.scratch / "sessions"))
    for f in args.scratch.glob("session*.sqlite"):
        f.unlink()
    stop_file = args.scratch / "stop-launch-loop"
    stop_file.unlink(missing_ok=True)
    t0 = time.monotonic()
    launcher = subprocess.Popen([gs, "launch", "--session", name, "-o", str(out), "--force-overwrite", "--", exe, str(N),
                                 "--stop-file", str(stop_file)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def cli(*argv):
        r = subprocess.run([gs, *argv], env=env, capture_output=True, text=True, timeout=120)
        print(f"$ gpuscope {' '.join(argv)}  -> exit {r.returncode}\n{g.indent((r.stdout + r.stderr).strip())}")
        return r

    # Wait for the session to appear.
    deadline = time.time() + 60
    listed = ""
    while time.time() < deadline:
        listed = cli("sessions").stdout
        if name in listed:
            break
        time.sleep(0.2)
    c.require(name in listed, "gpuscope sessions lists the session", listed[-300:])
    c.check("not recording" in listed, "the session starts not recording")
    time.sleep(1.0)
    r = cli("stop", name)
    c.check(r.returncode == 1 and "not recording" in r.stderr, "stop before start fails clearly")
    r = cli("start", name)
    c.check(r.returncode == 0 and "recording (window 1)" in r.stderr, "start opens window 1")
    r = cli("start", name)
    c.check(r.returncode == 1 and "already recording" in r.stderr, "a second start fails clearly")
    time.sleep(0.5)
    r = cli("stop", name)
    c.check(r.returncode == 0 and "session.w1.sqlite" in r.stderr, "stop writes session.w1.sqlite")
    time.sleep(0.5)
    r = cli("start", name, "--duration", "0.5")
    c.check(r.returncode == 0 and "session.w2.sqlite" in r.stderr, "start --duration 0.5 opens and closes window 2")
    for k in range(3, WINDOWS + 1):
        time.sleep(0.3)
        r = cli("start", name)
        c.check(r.returncode == 0 and f"recording (window {k})" in r.stderr, f"start opens window {k}")
        time.sleep(0.4)
        r = cli("stop", name)
        c.check(r.returncode == 0 and f"session.w{k}.sqlite" in r.stderr, f"stop writes session.w{k}.sqlite")
    program_running = launcher.poll() is None
    c.check(program_running, f"the program still runs after {WINDOWS} windows (N large enough)")
    print(f"  {WINDOWS} windows written after {time.monotonic() - t0:.1f} s; ending the loop (--stop-file)")
    stop_file.touch()
    stdout, stderr = launcher.communicate(timeout=150)
    print(f"  gpuscope launch ended after {time.monotonic() - t0:.1f} s")
    print(g.indent(g.tail(stderr, 15)))
    c.require(launcher.returncode == 0, "gpuscope launch exits 0", f"exit {launcher.returncode}")
    res = g.parse_result((g.result_lines(stdout) or ["RESULT"])[-1])
    launched = int(res.get("launches") or 0)
    c.check(0 < launched < N and res.get("counter") == str(launched), "the program's launches = its counter, "
            "ended early by --stop-file", f"launches {res.get('launches')}, counter {res.get('counter')}")

    traces = [(f"w{k}", args.scratch / f"session.w{k}.sqlite", k) for k in range(1, WINDOWS + 1)]
    traces.append(("final", args.scratch / "session.sqlite", WINDOWS))
    counts = {}
    per_window = {}  # window number -> {trace label: kernels}
    for label, path, windows in traces:
        if not c.check(path.exists(), f"{label}: {path.name} written"):
            continue
        con = g.open_db(path)
        wins = g.show(con, f"{label} capture_windows",
                      "SELECT pid, start_ns, end_ns, reason FROM capture_windows ORDER BY start_ns")
        c.equal(f"{label}: capture windows", windows, len(wins))
        c.check(all(w["reason"] == "session" for w in wins), f"{label}: windows' reason is 'session'")
        kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels")
        inside = 0
        for i, w in enumerate(wins, 1):
            launches, joined = window_counts(con, w)
            inside += joined
            per_window.setdefault(i, {})[label] = joined
            print(f"  {label} window {i}: {launches} launch calls, {joined} of their kernels")
            c.check(launches > 1000, f"{label} window {i}: launch calls recorded", f"{launches}")
            c.equal(f"{label} window {i}: kernels of its launch calls = its launch calls", launches, joined)
        counts[label] = kernels
        c.equal(f"{label}: kernels launched inside the windows = all kernels", kernels, inside)
        loss = g.scalar(con, "SELECT COUNT(*) FROM data_loss WHERE severity = 'data_loss'")
        c.equal(f"{label}: data_loss rows", 0, loss)
        if loss:
            g.data_summary(con)
    for i, by_trace in sorted(per_window.items()):
        c.check(len(set(by_trace.values())) == 1, f"window {i}: the same kernels in every trace that holds it",
                ", ".join(f"{t} {n}" for t, n in by_trace.items()))
    if len(counts) == WINDOWS + 1:
        series = [counts[f"w{k}"] for k in range(1, WINDOWS + 1)]
        print(f"  kernels: {', '.join(f'w{k} {n}' for k, n in enumerate(series, 1))}, final {counts['final']}, "
              f"launched {launched}")
        c.check(all(a < b for a, b in zip(series, series[1:])) and series[-1] == counts["final"] < launched,
                "w1 < w2 < ... < w5 = final < launched")
    c.finish()


if __name__ == "__main__":
    main()
