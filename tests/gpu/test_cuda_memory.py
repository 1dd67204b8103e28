#!/usr/bin/env python3
"""GPU test: gpuscope trace --cuda-memory-usage on a PyTorch training run.

Traces examples/pytorch/memory_peak.py (5 steps of an MLP, a 256 MiB spike in step 2), which
prints torch.cuda.max_memory_reserved() and every segment of PyTorch's caching allocator
(address, size). Pass when:
  - the trace has allocation records of device memory, each with its memory in use, and no
    warning that CUPTI refused the memory records;
  - every segment PyTorch holds at the end has an 'alloc' row at its address with its size
    (PyTorch never freed a segment: no empty_cache), all in the script's process;
  - the peak memory in use of those segments, replayed from memory_events, equals
    max_memory_reserved() within one allocation granule (2 MiB): the trace saw every segment
    PyTorch took and gave back;
  - the cuda_memory report's peak for the GPU (all device memory of the process: PyTorch's
    segments plus what libraries such as cuBLAS allocate themselves) is max_memory_reserved()
    within 2 MiB when nothing else was allocated, and otherwise at least max_memory_reserved()
    - 2 MiB and at most that + 2 MiB + the bytes allocated outside PyTorch's segments
    (listed, with their calls, as evidence);
  - the report has a row per NVTX step range, and step 2's peak is the spike's allocation
    (256 MiB above step 1's peak);
  - the Perfetto export has the counter "memory in use (device N)" whose highest value is the
    report's peak;
  - PyTorch's allocator state saved at exit (torch_memory_stats) holds the printed
    max_memory_reserved(), and the report's PyTorch Reserved Peak (its segments only, replayed
    from memory_events) equals it within 2 MiB, its Outside PyTorch at Peak is what the other
    allocations held;
  - on resnet18 training (examples/pytorch/resnet_train.py) under --cuda-memory-usage
    --pytorch=memory: PyTorch Reserved Peak = max_memory_reserved() within 2 MiB and PyTorch
    Tensors Peak (from the allocator's events) = memory_stats()['requested_bytes.all.peak']
    exactly (the bytes tensors asked for; max_memory_allocated() counts whole blocks).
"""
import json

import gputest as g

GRANULE = 2 * 1024 * 1024  # PyTorch's smallest segment, and the rounding of larger ones
MIB = 1024 * 1024


def segments_of(stdout):
    """{address: size} from the SEGMENT lines."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("SEGMENT "):
            f = g.parse_result(line)
            out[int(f["address"], 16)] = int(f["size"])
    return out


def replayed_peak(rows):
    """Peak of the sum of live allocations over alloc/free rows in time order (by address)."""
    live, in_use, peak = {}, 0, 0
    for r in rows:
        if r["operation"] == "alloc":
            in_use += r["bytes"] - live.get(r["address"], 0)
            live[r["address"]] = r["bytes"]
        elif r["address"] in live:
            in_use -= live.pop(r["address"])
        peak = max(peak, in_use)
    return peak


def report(gpuscope, db, name):
    r = g.run([gpuscope, "stats", db, "-r", name, "--format", "json"])
    if r.returncode != 0:
        return None
    doc = json.loads(r.stdout)["reports"][name]
    cols = [c["name"] + (f" ({c['unit']})" if c["unit"] else "") for c in doc["columns"]]
    return [dict(zip(cols, row)) for row in doc["rows"]], doc["notes"]


def pytorch_columns(c, rep_rows, max_reserved, max_requested=None, what=""):
    """Checks the device row's PyTorch columns against the program's own counters."""
    devices = [row for row in rep_rows if row["Scope"] == "device" and row["PyTorch Reserved Peak (bytes)"] is not None]
    c.require(len(devices) == 1, f"{what}: one device row with PyTorch columns", f"{len(devices)}")
    row = devices[0]
    reserved = row["PyTorch Reserved Peak (bytes)"]
    c.check(abs(reserved - max_reserved) <= GRANULE,
            f"{what}: report's PyTorch Reserved Peak = max_memory_reserved() within 2 MiB",
            f"report {reserved} B, PyTorch {max_reserved} B, difference {reserved - max_reserved} B")
    outside = row["Outside PyTorch at Peak (bytes)"]
    c.check(outside is not None and 0 <= outside <= row["Peak In Use (bytes)"],
            f"{what}: Outside PyTorch at Peak lies in [0, peak]", f"{outside} of {row['Peak In Use (bytes)']} B")
    if max_requested is not None:
        c.equal(f"{what}: report's PyTorch Tensors Peak = memory_stats()['requested_bytes.all.peak']", max_requested,
                row["PyTorch Tensors Peak (bytes)"])
    print(f"RESULT {what.replace(' ', '_')} pytorch_reserved_peak={reserved} max_memory_reserved={max_reserved} "
          f"pytorch_tensors_peak={row['PyTorch Tensors Peak (bytes)']} max_requested={max_requested} "
          f"outside_pytorch_at_peak={outside} peak={row['Peak In Use (bytes)']}")


def resnet(c, gpuscope, scratch):
    db = scratch / "resnet-memory.sqlite"
    r = g.run([gpuscope, "trace", "-o", scratch / "resnet-memory", "--force-overwrite", "--cuda-memory-usage",
               "--pytorch=memory", "--", *g.pyexample("resnet_train.py"), "--steps", "30"],
              env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False"}, timeout=600)
    c.require(r.returncode == 0, "resnet18: gpuscope trace --cuda-memory-usage --pytorch=memory exits 0",
              f"exit {r.returncode}")
    res = g.parse_result(g.result_lines(r.stdout)[-1])
    con = g.open_db(db)
    stats = g.query(con, "SELECT max_reserved_bytes, max_allocated_bytes, history_events FROM torch_memory_stats "
                         "WHERE pid = ?", (int(res["pid"]),))
    c.require(len(stats) == 1, "resnet18: the allocator's state was saved at exit", str(stats))
    c.equal("resnet18: torch_memory_stats holds the printed max_memory_reserved()", int(res["max_reserved"]),
            stats[0]["max_reserved_bytes"])
    rep = report(gpuscope, db, "cuda_memory")
    c.require(rep is not None, "resnet18: gpuscope stats -r cuda_memory runs")
    for n in rep[1]:
        print(f"    note: {n['text']}")
    print(f"  max_memory_allocated() {res['max_allocated']} B (whole blocks)")
    pytorch_columns(c, rep[0], int(res["max_reserved"]), int(res["max_requested"]), "resnet18")


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks("cuda memory usage (memory_peak.py)")
    gpuscope = g.gpuscope_bin(args.build)
    db = args.scratch / "memory.sqlite"
    # Expandable segments map memory with cuMemCreate/cuMemMap instead of cudaMalloc: the
    # segments this test compares are the classic ones, whatever the environment says.
    r = g.run([gpuscope, "trace", "-o", args.scratch / "memory", "--force-overwrite", "--cuda-memory-usage",
               "--", *g.pyexample("memory_peak.py")],
              env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False"})
    c.require(r.returncode == 0, "gpuscope trace --cuda-memory-usage exits 0", f"exit {r.returncode}")
    results = [g.parse_result(line) for line in g.result_lines(r.stdout)]
    c.require(len(results) == 1, "the script printed one RESULT line")
    res = results[0]
    pid, device = int(res["pid"]), int(res["device"])
    max_reserved = int(res["max_reserved"])
    segments = segments_of(r.stdout)
    print(f"  PyTorch: max_memory_reserved {max_reserved} B ({max_reserved / MIB:.1f} MiB), "
          f"{len(segments)} segments, {sum(segments.values())} B")
    c.check(bool(segments) and len(segments) == int(res["segments"]), "SEGMENT lines match the RESULT count",
            f"{len(segments)} lines, RESULT segments={res['segments']}")
    c.check(sum(segments.values()) == max_reserved,
            "PyTorch's segments at the end add up to max_memory_reserved (no segment was ever freed)",
            f"{sum(segments.values())} vs {max_reserved}")

    con = g.open_db(db)
    g.data_summary(con)
    refused = g.query(con, "SELECT text FROM messages WHERE text LIKE '%--cuda-memory-usage%'")
    c.require(not refused, "CUPTI accepted the memory records", str(refused))
    allocs = g.scalar(con, "SELECT COUNT(*) FROM memory_events WHERE operation = 'alloc' AND memory_kind = 'device' "
                           "AND pid = ?", (pid,))
    c.require(allocs and allocs > 0, "allocation records of device memory exist", f"{allocs} rows")
    c.check(g.scalar(con, "SELECT COUNT(*) FROM memory_events WHERE memory_kind = 'device' AND "
                          "operation IN ('alloc', 'free') AND in_use_bytes IS NULL") == 0,
            "every device allocation and free has its memory in use")
    g.show(con, "allocations by call", "SELECT api_name, COUNT(*) AS n, SUM(bytes) AS bytes FROM v_memory "
                                       "WHERE operation = 'alloc' GROUP BY api_name ORDER BY bytes DESC")

    rows = g.query(con, "SELECT operation, address, bytes, ts_ns FROM memory_events WHERE pid = ? AND device_id = ? "
                        "AND memory_kind = 'device' AND operation IN ('alloc', 'free') ORDER BY ts_ns, id",
                   (pid, device))
    seen = {row["address"]: row["bytes"] for row in rows if row["operation"] == "alloc"}
    missing = {hex(a): s for a, s in segments.items() if seen.get(a) != s}
    c.check(not missing, "every PyTorch segment has an alloc row with its address and size",
            f"missing or other size: {dict(list(missing.items())[:5])}" if missing else f"{len(segments)} segments")
    torch_peak = replayed_peak([row for row in rows if row["address"] in segments])
    c.check(abs(torch_peak - max_reserved) <= GRANULE,
            "peak in use of PyTorch's segments in the trace = max_memory_reserved within 2 MiB",
            f"trace {torch_peak} B, PyTorch {max_reserved} B, difference {torch_peak - max_reserved} B")
    others = [row for row in rows if row["operation"] == "alloc" and row["address"] not in segments]
    other_bytes = sum(row["bytes"] for row in others)
    print(f"  allocations outside PyTorch's segments: {len(others)}, {other_bytes} B")
    if others:
        outside = ",".join(str(row["address"]) for row in others)
        g.show(con, "allocations outside PyTorch's segments",
               f"SELECT api_name, address, bytes, ts_ns FROM v_memory WHERE pid = ? AND device_id = ? AND "
               f"memory_kind = 'device' AND operation = 'alloc' AND address IN ({outside}) ORDER BY ts_ns",
               (pid, device), limit=10)

    rep = report(gpuscope, db, "cuda_memory")
    c.require(rep is not None, "gpuscope stats -r cuda_memory runs")
    rep_rows, notes = rep
    for row in rep_rows:
        print(f"    {row}")
    for n in notes:
        print(f"    note: {n['text']}")
    devices = [row for row in rep_rows if row["Scope"] == "device"]
    c.require(len(devices) >= 1, "cuda_memory has a device row", f"{len(devices)}")
    peak = max(row["Peak In Use (bytes)"] for row in devices)
    diff = peak - max_reserved
    if other_bytes == 0:
        c.check(abs(diff) <= GRANULE, "report's peak memory in use = max_memory_reserved within 2 MiB",
                f"report {peak} B, PyTorch {max_reserved} B, difference {diff} B")
    else:
        c.check(-GRANULE <= diff <= other_bytes + GRANULE,
                "report's peak = max_memory_reserved within 2 MiB, plus at most what libraries allocated "
                "outside PyTorch's caching allocator",
                f"report {peak} B, PyTorch {max_reserved} B, difference {diff} B, outside the allocator "
                f"{other_bytes} B")
    print(f"RESULT trace_peak={peak} torch_segments_peak={torch_peak} max_memory_reserved={max_reserved} "
          f"outside_allocator_bytes={other_bytes}")
    c.equal("torch_memory_stats holds the printed max_memory_reserved()", max_reserved,
            g.scalar(con, "SELECT max_reserved_bytes FROM torch_memory_stats WHERE pid = ? AND device_id = ?",
                     (pid, device)))
    pytorch_columns(c, rep_rows, max_reserved, what="memory_peak")
    c.check(any("caching allocator shows here as segments" in n["text"] for n in notes),
            "the report says PyTorch's caching allocator shows as segments")
    # Steps come from PyTorch's optimizer.step() marks (on by default) where the program has them, else from
    # its NVTX step ranges. A step is named by the optimizer.step() call that ends it (0 for the first), so
    # N optimizer steps give N - 1 complete steps, "step 1".."step N-1" (and "step 0" only where operator
    # ranges show where the first began); memory_peak.py allocates its spike before step 2's
    # optimizer.step(), inside "step 2" on both numberings.
    scope = "step" if any(row["Scope"] == "step" for row in rep_rows) else "nvtx"
    steps = {row["Name"]: row for row in rep_rows if row["Scope"] == scope and row["Name"].startswith("step ")}
    want_steps = int(res["steps"]) - (1 if scope == "step" else 0)
    c.check(len(steps) == want_steps, f"a cuda_memory row per step ({scope} scope: {want_steps})", f"{sorted(steps)}")
    spike = 256 * MIB  # memory_peak.py's default --spike-mib, in step 2 (--spike-step)
    if "step 1" in steps and "step 2" in steps:
        s1, s2 = steps["step 1"], steps["step 2"]
        c.check(s2["Peak In Use (bytes)"] - s1["Peak In Use (bytes)"] >= spike - GRANULE,
                "step 2's peak is the 256 MiB spike above step 1's",
                f"step 1 {s1['Peak In Use (bytes)']} B, step 2 {s2['Peak In Use (bytes)']} B")
        c.check(s2["Peak Alloc (bytes)"] == spike and (s2["Peak Call"] or "").startswith("cuda"),
                "step 2's peak is reached by the spike's allocation call",
                f"{s2['Peak Call']} of {s2['Peak Alloc (bytes)']} B")

    perfetto = args.scratch / "memory.perfetto.json"
    e = g.run([gpuscope, "export", db, "--format", "perfetto", "-o", perfetto, "--force-overwrite"])
    c.require(e.returncode == 0, "gpuscope export exits 0")
    with open(perfetto, encoding="utf-8") as f:
        counters = [ev for ev in json.load(f)["traceEvents"] if ev.get("ph") == "C"]
    names = sorted({ev["name"] for ev in counters})
    c.check(bool(counters) and all(n.startswith("memory in use (device ") for n in names),
            "the export has memory in use counters", f"{len(counters)} samples, {names}")
    if counters:
        c.equal("the counter's highest value is the report's peak", peak,
                max(ev["args"]["bytes"] for ev in counters))
    resnet(c, gpuscope, args.scratch)
    c.finish()


if __name__ == "__main__":
    main()
