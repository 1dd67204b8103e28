#!/usr/bin/env python3
"""GPU test: gpuscope launch --session / start / stop / sessions on a running program.

Runs `launch_loop N` (a launch-bound loop of tiny kernels, several seconds) under
`gpuscope launch --session`, and from this script, while it runs: `gpuscope sessions` (the
session is listed, not recording), `start` + `stop` twice (each stop writes the windows so
far as NAME.wK.sqlite), then waits for the program's end. Pass when: the program's counter is
right; w1 holds one window and w2 two, reason 'session'; the final trace holds the same two
windows, every kernel it holds was launched inside one of them, and it holds fewer kernels
than the program launched but at least as many as w2; no data loss is reported for the
snapshots of processes still running; start while recording and stop while stopped fail
with a clear message.
"""
import os
import subprocess
import sys
import time

import gputest as g

N = 3_000_000  # ~2-3 us per launch untraced: several seconds


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
    launcher = subprocess.Popen([gs, "launch", "--session", name, "-o", str(out), "--force-overwrite", "--", exe, str(N)],
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
    program_running = launcher.poll() is None
    c.check(program_running, "the program still runs after both windows (N large enough)")

    stdout, stderr = launcher.communicate(timeout=300)
    print(g.indent(g.tail(stderr, 15)))
    c.require(launcher.returncode == 0, "gpuscope launch exits 0", f"exit {launcher.returncode}")
    res = g.parse_result((g.result_lines(stdout) or ["RESULT"])[-1])
    c.equal("program's launches and counter", (str(N), str(N)), (res.get("launches"), res.get("counter")))

    counts = {}
    for label, path, windows in (("w1", args.scratch / "session.w1.sqlite", 1),
                                 ("w2", args.scratch / "session.w2.sqlite", 2),
                                 ("final", args.scratch / "session.sqlite", 2)):
        if not c.check(path.exists(), f"{label}: {path.name} written"):
            continue
        con = g.open_db(path)
        wins = g.show(con, f"{label} capture_windows", "SELECT pid, start_ns, end_ns, reason FROM capture_windows")
        c.equal(f"{label}: capture windows", windows, len(wins))
        c.check(all(w["reason"] == "session" for w in wins), f"{label}: windows' reason is 'session'")
        kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels")
        inside = sum(len(g.kernel_launches_in(con, w["pid"], w["start_ns"], w["end_ns"])) for w in wins)
        counts[label] = kernels
        c.check(kernels > 0, f"{label}: kernels recorded", f"{kernels}")
        c.equal(f"{label}: kernels launched inside the windows = all kernels", kernels, inside)
        loss = g.scalar(con, "SELECT COUNT(*) FROM data_loss WHERE severity = 'data_loss'")
        c.equal(f"{label}: data_loss rows", 0, loss)
        if loss:
            g.data_summary(con)
    if len(counts) == 3:
        print(f"  kernels: w1 {counts['w1']}, w2 {counts['w2']}, final {counts['final']}, launched {N}")
        c.check(counts["w1"] < counts["w2"] <= counts["final"] < N, "w1 < w2 <= final < launched")
    c.finish()


if __name__ == "__main__":
    main()
