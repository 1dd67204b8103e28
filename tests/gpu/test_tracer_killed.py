#!/usr/bin/env python3
"""GPU test: gpuscope itself killed mid-run (as by the OOM killer or a batch time limit
killing the process group) loses nothing the collector had written.

Runs `gpuscope trace -o NAME -- crash 50 --sleep-ms 4000` in its own process group; once the
target printed its RESULT line (its 50 kernels synchronized) and 1.5 s passed (several
collector flush periods), SIGKILLs the whole group: gpuscope and the target. Pass when no
trace was written, NAME.logs/ holds the target's log and run.json, a new `trace -o NAME`
refuses and prints the import command, and `gpuscope import NAME.logs -o NAME` gives a
trace with all 50 kernels, their launch calls, and the command line from run.json.
"""
import os
import signal
import subprocess
import time

import gputest as g

LAUNCHES = 50


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("gpuscope trace killed mid-run")
    gs = g.gpuscope_bin(args.build)
    exe = g.example_bin(args.build, "crash")
    out = args.scratch / "killed"
    for p in (out.with_suffix(".sqlite"),):
        p.unlink(missing_ok=True)
    subprocess.run(["rm", "-rf", f"{out}.logs"], check=False)
    cmd = [str(gs), "trace", "-o", str(out), "--", str(exe), str(LAUNCHES), "--sleep-ms", "4000"]
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    line = proc.stdout.readline()
    while line and not line.startswith("RESULT "):
        line = proc.stdout.readline()
    c.require(line.startswith("RESULT "), "the target printed its RESULT line", line)
    time.sleep(1.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    c.equal("gpuscope was killed (-SIGKILL)", -signal.SIGKILL, proc.returncode)
    logs = f"{out}.logs"
    c.check(not out.with_suffix(".sqlite").exists(), "no trace was written by the killed gpuscope")
    names = sorted(os.listdir(logs)) if os.path.isdir(logs) else []
    print(f"  {logs}: {names}")
    c.require(any(n.endswith(".gslog") for n in names) and "run.json" in names, "the event log and run.json survive")

    r = g.run([gs, "trace", "-o", out, "--", exe, "1"])
    c.check(r.returncode != 0, "a new trace -o NAME refuses to run over the orphaned logs")
    c.check(f"gpuscope import {logs} -o {out}" in r.stderr, "and prints the import command")

    r = g.run([gs, "import", logs, "-o", out])
    c.require(r.returncode == 0, "gpuscope import of the orphaned logs succeeds", g.tail(r.stderr))
    con = g.open_db(out.with_suffix(".sqlite"))
    kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels")
    launches = g.scalar(con, "SELECT COUNT(*) FROM kernels k JOIN api_calls a ON a.pid = k.pid AND "
                             "a.correlation_id = k.correlation_id")
    command = g.scalar(con, "SELECT value FROM meta WHERE key = 'command'")
    print(f"  kernels {kernels}, with their launch call {launches}, command {command!r}")
    c.equal("kernels recovered", LAUNCHES, kernels)
    c.equal("kernels with their launch call", LAUNCHES, launches)
    c.check(str(exe) in (command or ""), "the command line comes from run.json", command)
    c.finish()


if __name__ == "__main__":
    main()
