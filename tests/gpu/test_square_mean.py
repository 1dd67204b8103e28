#!/usr/bin/env python3
"""GPU test: trace examples/pytorch/square_mean.py (torch.cuda.nvtx ranges).

Pass when the traced run prints the same RESULT line as the untraced run (check values,
no timings), the trace has REPS push/pop ranges of each of the six exact names, all
closed, and every one of those ranges contains at least one kernel whose launch API call
(joined on pid + correlation_id) starts inside it on the same thread.
"""
import gputest as g

NAMES = ["torch.square", "a * a", "a ** 2", "torch.mean", "tensor.mean", "sum/numel"]
REPS = 3


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks("square_mean.py NVTX ranges")
    target = g.pyexample("square_mean.py") + [REPS]

    plain = g.run(target)
    c.require(plain.returncode == 0, "untraced square_mean.py exits 0")
    r, db = g.trace(args.build, args.scratch, "square_mean", target)
    c.require(r.returncode == 0, "gpuscope trace exits 0", f"exit {r.returncode}")
    c.equal("RESULT line identical traced vs untraced", g.result_lines(plain.stdout), g.result_lines(r.stdout))

    con = g.open_db(db)
    rows = g.query(con, "SELECT id, pid, tid, text, start_ns, end_ns FROM v_nvtx "
                        "WHERE style = 'PushPop' ORDER BY start_ns")
    counts = {name: sum(1 for row in rows if row["text"] == name) for name in NAMES}
    print(f"  NVTX ranges per name (expected {REPS} each): {counts}")
    others = sorted({row["text"] for row in rows} - set(NAMES))
    print(f"  other push/pop range names: {others}")
    for name in NAMES:
        c.equal(f"ranges named {name!r}", REPS, counts[name])
    mine = [row for row in rows if row["text"] in NAMES]
    c.check(all(row["end_ns"] is not None for row in mine), "all ranges closed")
    for name in NAMES:
        per_range = []
        for row in (x for x in mine if x["text"] == name and x["end_ns"] is not None):
            per_range.append(len(g.kernel_launches_in(con, row["pid"], row["start_ns"], row["end_ns"], row["tid"])))
        sample = next((x for x in mine if x["text"] == name and x["end_ns"] is not None), None)
        kernel_names = sorted({k["name"] for k in g.kernel_launches_in(
            con, sample["pid"], sample["start_ns"], sample["end_ns"], sample["tid"])}) if sample else []
        print(f"  {name!r}: kernels launched per range {per_range}; e.g. {kernel_names[:3]}")
        c.check(bool(per_range) and min(per_range) >= 1, f"every {name!r} range has >= 1 kernel launched inside")
    g.data_summary(con)
    c.finish()


if __name__ == "__main__":
    main()
