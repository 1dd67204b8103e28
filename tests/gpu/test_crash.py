#!/usr/bin/env python3
"""GPU test: a target killed by SIGKILL keeps what the collector flushed.

Runs `crash 50` (50 launches, synchronize, sleep 1 s, then SIGKILL itself). Pass when
gpuscope exits 137 (128 + SIGKILL, passed through) and says on stderr that the target
ended abnormally, the trace exists and has the 50 kernels, processes.ended_cleanly = 0
(term_signal 9 when recorded), and data_loss or messages say the log was cut short.
"""
import gputest as g

LAUNCHES = 50


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("killed target (SIGKILL)")
    exe = g.example_bin(args.build, "crash")
    r, db = g.trace(args.build, args.scratch, "crash", [exe, LAUNCHES])
    c.equal("gpuscope exit code (128 + SIGKILL)", 137, r.returncode)
    said = r.stderr.lower()
    words = ("abnormal", "signal", "killed", "sigkill")
    c.check(any(w in said for w in words), f"stderr says the target ended abnormally (one of {words})")
    printed = g.result_lines(r.stdout)
    c.require(len(printed) == 1, "target printed its RESULT line before dying")
    pid = int(g.parse_result(printed[0])["pid"])
    c.require(db.exists(), "trace file exists", str(db))

    con = g.open_db(db)
    kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels WHERE pid = ?", (pid,))
    print(f"  kernels: launched {LAUNCHES}, recorded {kernels}")
    c.equal("kernels recorded before the kill (synchronized, then 1 s to flush)", LAUNCHES, kernels)
    procs = g.show(con, "processes", "SELECT pid, ended_cleanly, exit_status, term_signal FROM processes")
    row = next((p for p in procs if p["pid"] == pid), None)
    c.require(row is not None, "processes has the killed pid")
    c.equal("processes.ended_cleanly", 0, row["ended_cleanly"])
    c.check(row["term_signal"] in (None, 9), "processes.term_signal is 9 (or unknown)", str(row["term_signal"]))
    loss = g.show(con, "data_loss", "SELECT * FROM data_loss")
    notes = g.show(con, "messages", "SELECT * FROM messages")
    flagged = any(l["what"] == "truncated_log" for l in loss) or bool(loss) or bool(notes)
    c.check(flagged, "data_loss has 'truncated_log' (or another row / a message)")
    c.finish()


if __name__ == "__main__":
    main()
