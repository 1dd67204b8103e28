#!/usr/bin/env python3
"""GPU test: --capture-range=nvtx --nvtx-capture="step 3" records only step 3.

Traces cnn_train.py twice: fully (capture none) and with the NVTX capture range.
Pass when the capture trace has kernels, all launched inside its capture window, the
window lies inside the step-3 range of its own run (when the range is recorded), and its
kernel count equals the number of kernels launched inside "step 3" in the full trace.
"""
import gputest as g

TARGET_ARGS = ["--steps", 6, "--no-profiler-range"]


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks('cnn_train.py with --capture-range=nvtx --nvtx-capture="step 3"')
    target = g.pyexample("cnn_train.py") + TARGET_ARGS

    full, full_db = g.trace(args.build, args.scratch, "nvtx_full", target)
    c.require(full.returncode == 0, "full trace exits 0")
    con_full = g.open_db(full_db)
    step3 = g.query(con_full, "SELECT pid, tid, start_ns, end_ns FROM v_nvtx WHERE text = 'step 3'")
    c.require(len(step3) == 1 and step3[0]["end_ns"] is not None, "full trace has one closed 'step 3' range")
    s = step3[0]
    expected = g.kernel_launches_in(con_full, s["pid"], s["start_ns"], s["end_ns"])
    print(f"  full trace: {g.scalar(con_full, 'SELECT COUNT(*) FROM kernels')} kernels, "
          f"{len(expected)} launched inside 'step 3'")

    r, db = g.trace(args.build, args.scratch, "nvtx_capture", target,
                    options=["--capture-range=nvtx", "--nvtx-capture=step 3"])
    c.require(r.returncode == 0, "capture trace exits 0", f"exit {r.returncode}")
    con = g.open_db(db)
    windows = g.show(con, "capture_windows", "SELECT * FROM capture_windows")
    kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels")
    c.check(kernels > 0, "kernels recorded", str(kernels))
    c.equal("kernels: capture trace vs launched in 'step 3' of the full trace", len(expected), kernels)
    c.equal("capture windows", 1, len(windows))
    c.check(any((w["reason"] or "").startswith("nvtx") for w in windows), "window reason is 'nvtx:...'")
    if windows:
        w = windows[0]
        inside = g.kernel_launches_in(con, w["pid"], w["start_ns"], w["end_ns"])
        c.equal("kernels launched inside the window", kernels, len(inside))
        own = g.query(con, "SELECT start_ns, end_ns FROM v_nvtx WHERE text = 'step 3'")
        if own and own[0]["end_ns"] is not None:
            c.check(own[0]["start_ns"] <= w["start_ns"] and w["end_ns"] <= own[0]["end_ns"] + 1_000_000,
                    "window lies inside this run's 'step 3' range (1 ms slack at the end)",
                    f"window {w['start_ns']}..{w['end_ns']}, range {own[0]['start_ns']}..{own[0]['end_ns']}")
        others = g.query(con, "SELECT DISTINCT text FROM v_nvtx WHERE text LIKE 'step %'")
        print(f"  step ranges in the capture trace: {[o['text'] for o in others]}")
    g.data_summary(con)
    c.finish()


if __name__ == "__main__":
    main()
