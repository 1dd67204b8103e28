#!/usr/bin/env python3
"""GPU test: --capture-range=cudaProfilerApi records only launches between
cudaProfilerStart and cudaProfilerStop.

Runs `launch_loop 1000 --profiler-range 100 199` under gpuscope. Pass when the program
succeeds, exactly 100 kernels are recorded, one capture window with reason
'cudaProfilerStart' exists, and every recorded kernel's launch call lies inside it.
"""
import gputest as g

N, A, B = 1000, 100, 199


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("capture-range=cudaProfilerApi")
    exe = g.example_bin(args.build, "launch_loop")
    r, db = g.trace(args.build, args.scratch, "capture_profiler_api",
                    [exe, N, "--profiler-range", A, B], options=["--capture-range=cudaProfilerApi"])
    c.require(r.returncode == 0, "gpuscope trace exits 0", f"exit {r.returncode}")
    res = g.parse_result((g.result_lines(r.stdout) or ["RESULT"])[-1])
    c.equal("program's launches / profiled_launches", (str(N), str(B - A + 1)),
            (res.get("launches"), res.get("profiled_launches")))

    con = g.open_db(db)
    windows = g.show(con, "capture_windows", "SELECT * FROM capture_windows")
    c.equal("kernels recorded", B - A + 1, g.scalar(con, "SELECT COUNT(*) FROM kernels"))
    c.equal("capture windows", 1, len(windows))
    c.check(any(w["reason"] == "cudaProfilerStart" for w in windows), "window reason is 'cudaProfilerStart'")
    if windows:
        w = windows[0]
        inside = g.kernel_launches_in(con, w["pid"], w["start_ns"], w["end_ns"])
        c.equal("kernels whose launch call lies inside the window", B - A + 1, len(inside))
    launches = g.scalar(con, "SELECT COUNT(*) FROM v_api_calls WHERE name LIKE 'cudaLaunchKernel%'")
    print(f"  cudaLaunchKernel calls recorded: {launches} (expected {B - A + 1})")
    c.equal("cudaLaunchKernel calls recorded", B - A + 1, launches)
    g.data_summary(con)
    c.finish()


if __name__ == "__main__":
    main()
