#!/usr/bin/env python3
"""GPU test: workers started by multiprocessing ('spawn') are traced.

Runs examples/pytorch/multiproc.py (2 workers, 30 and 50 in-place adds). Pass when both
workers report ok=1, kernels come from >= 2 distinct pids, each worker's pid has at least
min_kernels kernels, and processes lists both workers.
"""
import gputest as g


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks("multiprocessing spawn workers")
    r, db = g.trace(args.build, args.scratch, "multiproc", g.pyexample("multiproc.py"))
    c.require(r.returncode == 0, "gpuscope trace exits 0", f"exit {r.returncode}")
    workers = [g.parse_result(l) for l in g.result_lines(r.stdout)]
    c.require(len(workers) == 2 and all(w.get("ok") == "1" for w in workers), "2 workers reported ok=1")

    con = g.open_db(db)
    per_pid = {row["pid"]: row["n"] for row in g.query(con, "SELECT pid, COUNT(*) AS n FROM kernels GROUP BY pid")}
    print(f"  kernels per pid: {per_pid}")
    c.check(len(per_pid) >= 2, "kernels from >= 2 distinct pids", str(len(per_pid)))
    for w in workers:
        pid, least = int(w["pid"]), int(w["min_kernels"])
        c.check(per_pid.get(pid, 0) >= least, f"worker {w['worker']} (pid {pid}) has >= {least} kernels",
                f"got {per_pid.get(pid, 0)}")
    procs = {p["pid"] for p in g.show(con, "processes", "SELECT pid, ppid, cmdline, ended_cleanly FROM processes")}
    c.check({int(w["pid"]) for w in workers} <= procs, "processes lists both workers")
    g.data_summary(con)
    c.finish()


if __name__ == "__main__":
    main()
