#!/usr/bin/env python3
"""GPU test: --capture-range=cudaProfilerApi on examples/pytorch/cnn_train.py.

cnn_train calls torch.cuda.profiler.start() before step 5 and stop() after step 10.
Pass when the traced --deterministic run prints the same final loss as the untraced one,
the NVTX "step N" ranges recorded are exactly steps 5..10, kernels are recorded and each
step range has kernels launched inside it, and no kernel's launch lies outside the
recorded capture window(s).
"""
import re

import gputest as g

STEPS = 15
EXPECTED_STEPS = list(range(5, 11))


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks("cnn_train.py with --capture-range=cudaProfilerApi")
    target = g.pyexample("cnn_train.py") + ["--steps", STEPS, "--deterministic"]

    plain = g.run(target)
    c.require(plain.returncode == 0, "untraced cnn_train.py exits 0")
    r, db = g.trace(args.build, args.scratch, "cnn_capture", target, options=["--capture-range=cudaProfilerApi"])
    c.require(r.returncode == 0, "gpuscope trace exits 0", f"exit {r.returncode}")
    loss = lambda out: [g.parse_result(l).get("final_loss") for l in g.result_lines(out)]
    c.equal("final loss identical traced vs untraced (deterministic)", loss(plain.stdout), loss(r.stdout))

    con = g.open_db(db)
    windows = g.show(con, "capture_windows", "SELECT * FROM capture_windows")
    steps = g.query(con, "SELECT pid, tid, text, start_ns, end_ns FROM v_nvtx WHERE text LIKE 'step %' ORDER BY start_ns")
    numbers = [int(m.group(1)) for s in steps if (m := re.fullmatch(r"step (\d+)", s["text"] or ""))]
    c.equal("NVTX step ranges recorded", EXPECTED_STEPS, numbers)
    kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels")
    print(f"  kernels recorded: {kernels}; memcpys: {g.scalar(con, 'SELECT COUNT(*) FROM memcpys')}")
    c.check(kernels > 0, "kernels recorded")
    per_step = {}
    for s in steps:
        if s["end_ns"] is not None:
            per_step[s["text"]] = len(g.kernel_launches_in(con, s["pid"], s["start_ns"], s["end_ns"], s["tid"]))
    print(f"  kernels launched per step range: {per_step}")
    c.check(bool(per_step) and min(per_step.values()) > 0, "every recorded step has kernels launched inside")
    c.check(len(windows) >= 1, "a capture window is recorded")
    if windows:
        outside = g.scalar(con, "SELECT COUNT(*) FROM kernels k JOIN api_calls a ON a.pid = k.pid "
                                "AND a.correlation_id = k.correlation_id WHERE NOT EXISTS (SELECT 1 FROM "
                                "capture_windows w WHERE w.pid = k.pid AND a.start_ns BETWEEN w.start_ns AND w.end_ns)")
        c.equal("kernels launched outside the capture window(s)", 0, outside)
    g.data_summary(con)
    c.finish()


if __name__ == "__main__":
    main()
