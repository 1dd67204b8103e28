#!/usr/bin/env python3
"""GPU test: a child process started with fork+exec is traced too.

Runs `child_procs 7 13` (parent launches 7 kernels, its exec'd child 13). Pass when both
RESULT lines appear, kernels come from exactly those 2 pids with exactly the printed
counts, and processes has both pids with the child's ppid = the parent's pid.
"""
import gputest as g

K1, K2 = 7, 13


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("child processes (fork + exec)")
    exe = g.example_bin(args.build, "child_procs")
    r, db = g.trace(args.build, args.scratch, "child_procs", [exe, K1, K2])
    c.require(r.returncode == 0, "gpuscope trace exits 0", f"exit {r.returncode}")
    results = {f["role"]: f for f in map(g.parse_result, g.result_lines(r.stdout))}
    c.require({"parent", "child"} <= results.keys(), "parent and child RESULT lines", str(results))
    expected = {int(f["pid"]): int(f["launches"]) for f in results.values()}

    con = g.open_db(db)
    per_pid = {row["pid"]: row["n"] for row in
               g.query(con, "SELECT pid, COUNT(*) AS n FROM kernels GROUP BY pid")}
    print(f"  kernels per pid: printed {expected}, traced {per_pid}")
    c.equal("kernels per pid", expected, per_pid)
    procs = g.show(con, "processes", "SELECT pid, ppid, exe, ended_cleanly, exit_status FROM processes")
    pids = {p["pid"]: p for p in procs}
    c.check(set(expected) <= set(pids), "processes has parent and child", f"{sorted(pids)}")
    child_pid, parent_pid = int(results["child"]["pid"]), int(results["parent"]["pid"])
    if child_pid in pids:
        c.equal("child's ppid", parent_pid, pids[child_pid]["ppid"])
    c.check(all(pids[p]["ended_cleanly"] == 1 for p in expected if p in pids), "both ended cleanly")
    g.data_summary(con)
    c.finish()


if __name__ == "__main__":
    main()
