#!/usr/bin/env python3
"""GPU test: trace examples/cuda/vector_add and check the trace against what it printed.

Pass when: the traced run prints the same RESULT line as the untraced run; the trace has
exactly `launches` kernels, all named *add*, with the serial <<<1,1>>> and the parallel
<<<blocks,256>>> shapes; HtoD/DtoH memcpy bytes equal h2d_bytes/d2h_bytes; every kernel
joins a cudaLaunchKernel API call on (pid, correlation_id); NVTX has "vector_add" at depth
0 and "serial", "parallel" at depth 1 with it as parent, all closed; the thread is named
"main"; the process ended cleanly with exit status 0 and no data_loss-severity rows.
"""
import gputest as g


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("trace vector_add")
    exe = g.example_bin(args.build, "vector_add")

    plain = g.run([exe])
    c.require(plain.returncode == 0, "untraced vector_add exits 0")
    traced, db = g.trace(args.build, args.scratch, "vector_add", [exe])
    c.require(traced.returncode == 0, "gpuscope trace -- vector_add exits 0", f"exit {traced.returncode}")
    plain_result, traced_result = g.result_lines(plain.stdout), g.result_lines(traced.stdout)
    c.equal("RESULT line identical traced vs untraced", plain_result, traced_result)
    c.require(len(traced_result) == 1, "one RESULT line")
    res = g.parse_result(traced_result[0])
    launches, h2d, d2h, n = (int(res[k]) for k in ("launches", "h2d_bytes", "d2h_bytes", "n"))

    con = g.open_db(db)
    procs = g.show(con, "processes", "SELECT pid, ppid, exe, ended_cleanly, exit_status, term_signal FROM processes")
    c.require(len(procs) >= 1, "processes has a row")
    pid = procs[0]["pid"]
    c.equal("processes.ended_cleanly", 1, procs[0]["ended_cleanly"])
    c.equal("processes.exit_status", 0, procs[0]["exit_status"])

    kernels = g.show(con, "kernels", "SELECT id, pid, name, short_name, grid_x, block_x, correlation_id, duration_ns "
                                     "FROM v_kernels ORDER BY start_ns")
    c.equal("kernel count == launches printed", launches, len(kernels))
    c.check(all("add" in (k["name"] or "") for k in kernels), "every kernel name contains 'add'",
            str(sorted({k['name'] for k in kernels})))
    c.check(all((k["duration_ns"] or 0) > 0 for k in kernels), "every kernel has a positive duration")
    if len(kernels) == 2:
        blocks = (n + 255) // 256
        c.equal("serial kernel grid x block", (1, 1), (kernels[0]["grid_x"], kernels[0]["block_x"]))
        c.equal("parallel kernel grid x block", (blocks, 256), (kernels[1]["grid_x"], kernels[1]["block_x"]))

    copies = g.show(con, "memcpys", "SELECT copy_kind, bytes, src_kind, dst_kind, correlation_id FROM memcpys")
    h2d_sum = g.scalar(con, "SELECT COALESCE(SUM(bytes), 0) FROM memcpys WHERE copy_kind = 'HtoD'")
    d2h_sum = g.scalar(con, "SELECT COALESCE(SUM(bytes), 0) FROM memcpys WHERE copy_kind = 'DtoH'")
    c.equal("HtoD bytes == h2d_bytes printed", h2d, h2d_sum)
    c.equal("DtoH bytes == d2h_bytes printed", d2h, d2h_sum)
    c.check(len(copies) >= 3, "at least 3 memcpy records (2 HtoD, 1 DtoH)", f"{len(copies)}")

    joined = g.query(con, "SELECT k.id, a.name AS api FROM v_kernels k JOIN v_api_calls a "
                          "ON a.pid = k.pid AND a.correlation_id = k.correlation_id")
    print(f"  kernel -> launch API: {[(j['id'], j['api']) for j in joined]}")
    c.equal("kernels joined to an API call on correlation_id", len(kernels), len(joined))
    c.check(all((j["api"] or "").startswith("cudaLaunchKernel") for j in joined),
            "each launching API call is cudaLaunchKernel*")
    copy_apis = g.query(con, "SELECT a.name AS api FROM memcpys m JOIN v_api_calls a "
                             "ON a.pid = m.pid AND a.correlation_id = m.correlation_id")
    c.check(len(copy_apis) == len(copies) and all((r["api"] or "").startswith("cudaMemcpy") for r in copy_apis),
            "each memcpy joins a cudaMemcpy* API call", str([r["api"] for r in copy_apis]))

    ranges = g.show(con, "NVTX push/pop ranges", "SELECT id, text, depth, parent_id, start_ns, end_ns, tid "
                                                 "FROM v_nvtx WHERE style = 'PushPop' ORDER BY start_ns")
    by_text = {r["text"]: r for r in ranges}
    c.equal("NVTX range names", ["vector_add", "serial", "parallel"], [r["text"] for r in ranges])
    c.check(all(r["end_ns"] is not None for r in ranges), "all NVTX ranges closed (end_ns set)")
    if {"vector_add", "serial", "parallel"} <= by_text.keys():
        top, serial, parallel = by_text["vector_add"], by_text["serial"], by_text["parallel"]
        c.equal("vector_add depth, parent", (0, None), (top["depth"], top["parent_id"]))
        c.equal("serial depth, parent", (1, top["id"]), (serial["depth"], serial["parent_id"]))
        c.equal("parallel depth, parent", (1, top["id"]), (parallel["depth"], parallel["parent_id"]))
        if None not in (serial["end_ns"], parallel["end_ns"]):
            in_serial = g.kernel_launches_in(con, pid, serial["start_ns"], serial["end_ns"])
            in_parallel = g.kernel_launches_in(con, pid, parallel["start_ns"], parallel["end_ns"])
            c.equal("kernels launched inside 'serial'", 1, len(in_serial))
            c.equal("kernels launched inside 'parallel'", 1, len(in_parallel))

    names = g.show(con, "threads", "SELECT pid, tid, name FROM threads")
    c.check(any(t["name"] == "main" for t in names), "main thread named 'main' (nvtxNameOsThreadA)")
    loss = g.query(con, "SELECT * FROM data_loss WHERE severity = 'data_loss'")
    g.data_summary(con)
    c.equal("data_loss rows with severity data_loss", 0, len(loss))
    c.finish()


if __name__ == "__main__":
    main()
