#!/usr/bin/env python3
"""GPU test: the cheap default trace loses nothing; every mode keeps each kernel's launch call.

Runs `launch_loop 20000` under gpuscope three times: the default (API calls timed by
gpuscope's own callbacks, no sync records), `--cuda-api all` (CUPTI API activity records)
and `--cuda-sync-records`. Pass when, in each trace: exactly 20000 kernels, each matched to
one cudaLaunchKernel call of the same pid and correlation id, no kernel starting before
its launch call, no correlation id shared by two calls, no data loss; the default's
trace holds the calibrated tracer cost in meta (tracer_launch_cost_ns >= 0, and a
tracer_cost_method line); --cuda-sync-records gives syncs rows (launch_loop calls
cudaDeviceSynchronize) and the default none.
"""
import gputest as g

N = 20000


def check_trace(c, con, label):
    kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels")
    c.equal(f"{label}: kernels recorded", N, kernels)
    matched = g.scalar(con, "SELECT COUNT(*) FROM kernels k JOIN v_api_calls a ON a.pid = k.pid "
                            "AND a.correlation_id = k.correlation_id WHERE a.name LIKE 'cudaLaunchKernel%'")
    c.equal(f"{label}: kernels matched to their cudaLaunchKernel call", N, matched)
    dup = g.scalar(con, "SELECT COUNT(*) FROM (SELECT pid, correlation_id FROM api_calls "
                        "GROUP BY pid, correlation_id HAVING COUNT(*) > 1)")
    c.equal(f"{label}: correlation ids used by more than one API call", 0, dup)
    early = g.scalar(con, "SELECT COUNT(*) FROM kernels k JOIN api_calls a ON a.pid = k.pid "
                          "AND a.correlation_id = k.correlation_id WHERE k.start_ns < a.start_ns")
    c.equal(f"{label}: kernels that start before their launch call", 0, early)
    lost = g.scalar(con, "SELECT COALESCE(SUM(count), 0) FROM data_loss WHERE severity = 'data_loss'")
    c.equal(f"{label}: records lost", 0, lost)


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("trace modes keep every launch")
    exe = g.example_bin(args.build, "launch_loop")
    syncs = {}
    for label, options in (("default", ["--calibrate=always"]), ("--cuda-api all", ["--cuda-api", "all"]),
                           ("--cuda-sync-records", ["--cuda-sync-records"])):
        r, db = g.trace(args.build, args.scratch, label.strip("-").replace(" ", "_"), [exe, N], options=options)
        c.require(r.returncode == 0, f"{label}: gpuscope trace exits 0", f"exit {r.returncode}")
        con = g.open_db(db)
        check_trace(c, con, label)
        syncs[label] = g.scalar(con, "SELECT COUNT(*) FROM syncs")
        if label == "default":
            meta = {row["key"]: row["value"] for row in
                    g.query(con, "SELECT key, value FROM meta WHERE key LIKE 'tracer_%' OR key = 'cuda_api_calls'")}
            print(f"  meta: {meta}")
            c.equal("default: cuda_api_calls in meta", "gpu", meta.get("cuda_api_calls"))
            cost = float(meta.get("tracer_launch_cost_ns", "nan"))
            c.check(cost >= 0 and cost < 1e6, f"default: tracer_launch_cost_ns is a cost in ns ({cost})")
            c.check(meta.get("tracer_cost_method", "").startswith("calibrated"), "default: tracer_cost_method says how")
    c.equal("default: syncs rows (sync records off)", 0, syncs["default"])
    c.check(syncs["--cuda-sync-records"] > 0, f"--cuda-sync-records: syncs rows ({syncs['--cuda-sync-records']})")
    c.finish()


if __name__ == "__main__":
    main()
