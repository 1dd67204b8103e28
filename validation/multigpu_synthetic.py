#!/usr/bin/env python3
"""multigpu_synthetic: the files multigpu_check.py reads, made up, to check its analysis on a
machine without GPUs (`multigpu_check.py --analyze-only` over them).

    multigpu_synthetic.py --make-trace BUILD/bin/gpuscope_make_trace --out OUT [--variant V]

Writes OUT.work/ as multigpu_check.py --out OUT would have left it after a run on 2 GPUs:
  ddp.sqlite, ddp.out        a 2-rank DDP-like trace (pids 1000, 1001 on GPUs 0, 1; 20 steps of
                             10 ms: compute kernels, NCCL AllReduce kernels that partly overlap
                             them, a compute kernel across each step boundary), the RESULT lines
  torch.rank{0,1}.json       the kernel counts of steps 10-14 (as torch.profiler would give)
  slow.sqlite, slow.out      the same with rank 1's NCCL kernels 20 ms late from step 5 on
  busbw.sqlite, busbw.out    nccl_busbw.py's AllReduce kernels of 1, 4, 16, 64 and 256 MiB with
                             their nccl:all_reduce operators and shapes (--pytorch=ops,shapes)
  busbw_plain.json           the CUDA-event loop figures those kernels imply (S / algbw + the 1 us gap per call)
The traces start from gpuscope_make_trace's (every table of the schema), emptied.
--variant: 'pass' (default); 'fail' gives rank 1 one kernel torch.profiler did not count, makes
rank 1 20 ms late at steps 3 and 4 too (an onset before the delay) and the plain busbw 11 % higher.
The trace tables are then read by `gpuscope stats` and by multigpu_check.py.
"""
import argparse
import json
import sqlite3
import subprocess
from pathlib import Path

MS = 1_000_000
T0 = 1_800_000_000_000_000_000
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
GEMM = "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(cutlass_80_simt_sgemm_128x64_8x5_nn_align1::Params)"
RELU = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)"
SGD = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)"


class Trace:
    def __init__(self, make_trace, path):
        path.unlink(missing_ok=True)
        subprocess.run([make_trace, str(path), "--launches", "1"], check=True, capture_output=True)
        self.con = sqlite3.connect(path)
        for t in ("kernels", "api_calls", "nvtx_events", "processes", "threads", "devices", "syncs", "memcpys",
                  "memsets", "capture_windows", "torch_steps", "torch_ops", "torch_op_activities"):
            self.con.execute(f"DELETE FROM {t}")
        self.strings = {v: i for i, v in self.con.execute("SELECT id, value FROM strings")}
        self.kid = self.nid = self.corr = 0

    def s(self, value):
        if value not in self.strings:
            self.strings[value] = max(self.strings.values(), default=0) + 1
            self.con.execute("INSERT INTO strings (id, value) VALUES (?, ?)", (self.strings[value], value))
        return self.strings[value]

    def process(self, pid, rank, world, device, end):
        self.con.execute("INSERT INTO processes (pid, ppid, host, cmdline, exe, start_ns, end_ns, ended_cleanly, "
                         "exit_status, rank, local_rank, world_size, launcher, log_bytes) VALUES "
                         "(?, 1, 'synthetic', 'python3 ddp_train.py', 'python3', ?, ?, 1, 0, ?, ?, ?, 'torchrun', 0)",
                         (pid, T0, end, rank, rank, world))
        self.con.execute("INSERT INTO threads (pid, tid, name) VALUES (?, ?, 'python3')", (pid, pid))
        self.con.execute("INSERT INTO capture_windows (pid, start_ns, end_ns, reason) VALUES (?, ?, ?, 'all')",
                         (pid, T0, end))
        self.con.execute("INSERT INTO devices (pid, device_id, name, uuid) VALUES (?, ?, 'NVIDIA H100 (synthetic)', ?)",
                         (pid, device, f"GPU-synthetic-{device}"))

    def kernel(self, pid, device, stream, start, end, name):
        self.kid += 1
        self.corr += 1
        self.con.execute("INSERT INTO kernels (id, pid, device_id, context_id, stream_id, correlation_id, start_ns, "
                         "end_ns, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, launch_type) VALUES "
                         "(?, ?, ?, 1, ?, ?, ?, ?, ?, 1, 1, 1, 128, 1, 1, 0)",
                         (self.kid, pid, device, stream, self.corr, start, end, self.s(name)))
        self.con.execute("INSERT INTO api_calls (pid, tid, domain, cbid, name_id, start_ns, end_ns, correlation_id, "
                         "return_value) VALUES (?, ?, 'runtime', 0, ?, ?, ?, ?, 0)",
                         (pid, pid, self.s("cudaLaunchKernel"), start - 20_000, start - 15_000, self.corr))
        return self.corr

    def range(self, pid, text, start, end, depth=0):
        self.nid += 1
        self.con.execute("INSERT INTO nvtx_events (id, pid, tid, end_tid, style, text_id, start_ns, end_ns, depth, "
                         "category) VALUES (?, ?, ?, ?, 'PushPop', ?, ?, ?, ?, 0)",
                         (self.nid, pid, pid, pid, self.s(text), start, end, depth))
        return self.nid

    def close(self):
        self.con.commit()
        self.con.close()


def ddp_trace(make_trace, path, slow_from=None, early_late=(), extra_kernel_rank1=False):
    """20 steps of 10 ms (30 ms from slow_from on for every rank, rank 1 late)."""
    t = Trace(make_trace, path)
    counts = {0: {}, 1: {}}
    pids = {0: 1000, 1: 1001}
    step_start = T0 + 5 * MS
    starts = []
    for step in range(20):
        # rank 1 sleeps from slow_from on, and also at the steps early_late (an onset before the delay)
        late = 20 * MS if (slow_from is not None and step >= slow_from) or step in early_late else 0
        length = 10 * MS + late
        starts.append((step_start, step_start + length))
        for rank in (0, 1):
            pid, dev = pids[rank], rank
            s = step_start
            names = []
            # forward, then (rank 1 sleeping when late) backward with the all-reduces.
            for i in range(4):
                names.append((s + i * 400_000, s + i * 400_000 + 350_000, GEMM))
            names.append((s + 1_700_000, s + 1_750_000, RELU))
            b = s + 2 * MS + (late if rank == 1 else 0)
            for i in range(8):
                names.append((b + i * 500_000, b + i * 500_000 + 450_000, GEMM))
            for i in range(4):  # NCCL: start when this rank arrives, end together (rank 1's arrival + 0.9 ms)
                arrive = s + 3 * MS + i * MS + (late if rank == 1 else 0)
                together = s + 3 * MS + i * MS + late + 900_000
                names.append((arrive, together, NCCL))
            names.append((s + 9 * MS + late, s + 9 * MS + late + 200_000, SGD))
            if step < 19:  # a compute kernel across the step boundary (starts 0.1 ms before it)
                names.append((s + length - 100_000, s + length + 100_000, RELU))
            if extra_kernel_rank1 and rank == 1 and step == 12:
                names.append((s + 8 * MS, s + 8 * MS + 10_000, RELU))
            for start, end, name in names:
                stream = 13 if name == NCCL else 7
                t.kernel(pid, dev, stream, start, end, name)
                # counts for torch.profiler: kernels that start inside the step (the boundary
                # kernel starts inside this step)
                if 10 <= step < 15 and not (extra_kernel_rank1 and start == s + 8 * MS):
                    counts[rank][name] = counts[rank].get(name, 0) + 1
            t.range(pid, f"step {step}", s, s + length)
            t.con.execute("INSERT INTO torch_steps (pid, step, start_ns, end_ns) VALUES (?, ?, ?, ?)",
                          (pid, step, s, s + length))
        step_start += length
    for rank in (0, 1):
        t.process(pids[rank], rank, 2, rank, step_start + MS)
    t.close()
    return counts, pids


GAP_NS = 1_000  # between one back-to-back kernel's end and the next one's start


def busbw_trace(make_trace, path, sizes_mib, gbs_algbw):
    """nccl_busbw.py's timed loops: per size 25 AllReduce kernels on each rank, each inside an
    nccl:all_reduce op with its shapes; kernel time = S / algbw. The first of each size starts
    50 us after the size before (launched after it ended: the CPU's pace), rank 1 arriving 5 us
    late; the next 24 follow GAP_NS after the one before on both ranks, each launched (its API
    call ended) 15 us before it starts, while the one before still ran: back to back, every
    S / algbw + GAP_NS from one end to the next, which is what the plain loop's time per call is."""
    t = Trace(make_trace, path)
    pids = {0: 2000, 1: 2001}
    now = T0 + MS
    for mib in sizes_mib:
        size = mib << 20
        dur = int(size / gbs_algbw[mib])  # bytes / (GB/s) = ns
        now += 50_000
        for k in range(25):
            late = 5_000 if k == 0 else 0
            for rank in (0, 1):
                pid = pids[rank]
                arrive = now + (late if rank == 1 else 0)
                corr = t.kernel(pid, rank, 13, arrive, now + late + dur, NCCL)
                nid = t.range(pid, f"nccl:all_reduce, seq = 0, op_id = {t.nid}, sizes = [[{size // 4}]]",
                              arrive - 30_000, arrive - 10_000)
                t.con.execute("INSERT INTO torch_ops (nvtx_id, pid, tid, name_id, seq, op_id, sizes, is_backward) "
                              "VALUES (?, ?, ?, ?, 0, ?, ?, 0)",
                              (nid, pid, pid, t.s("nccl:all_reduce"), nid, f"[[{size // 4}]]"))
                t.con.execute("INSERT INTO torch_op_activities (pid, correlation_id, op_nvtx_id) VALUES (?, ?, ?)",
                              (pid, corr, nid))
            now += late + dur + GAP_NS
    for rank in (0, 1):
        t.process(pids[rank], rank, 2, rank, now + MS)
    t.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--make-trace", required=True, help="BUILD/bin/gpuscope_make_trace")
    p.add_argument("--out", required=True, help="OUT as given to multigpu_check.py --out")
    p.add_argument("--variant", choices=["pass", "fail"], default="pass")
    args = p.parse_args()
    work = Path(f"{Path(args.out).resolve()}.work")
    work.mkdir(parents=True, exist_ok=True)
    fail = args.variant == "fail"
    counts, pids = ddp_trace(args.make_trace, work / "ddp.sqlite", extra_kernel_rank1=fail)
    (work / "ddp.out").write_text("".join(f"RESULT rank={r} pid={pids[r]} device={r} world=2 steps=20 "
                                          f"ms_per_step=10.0\n" for r in (0, 1)))
    for rank in (0, 1):
        (work / f"torch.rank{rank}.json").write_text(json.dumps(
            {"rank": rank, "pid": 9, "device": rank, "steps": [10, 15], "kernels": counts[rank]}))
    ddp_trace(args.make_trace, work / "slow.sqlite", slow_from=5, early_late=(3, 4) if fail else ())
    (work / "slow.out").write_text("".join(f"RESULT rank={r} pid={1000 + r} device={r} world=2 steps=20 "
                                           f"ms_per_step=30.0\n" for r in (0, 1)))
    sizes = [1, 4, 16, 64, 256]
    algbw = {1: 60.0, 4: 120.0, 16: 160.0, 64: 180.0, 256: 190.0}
    busbw_trace(args.make_trace, work / "busbw.sqlite", sizes, algbw)
    rows = []
    for mib in sizes:
        size = mib << 20
        time_us = (int(size / algbw[mib]) + GAP_NS) / 1e3 * (0.9 if fail else 1.0)
        a = size / (time_us * 1e-6) / 1e9
        rows.append({"bytes": size, "iters": 20, "time_us": time_us, "algbw_gbs": a, "busbw_gbs": a})
    (work / "busbw_plain.json").write_text(json.dumps({"world_size": 2, "sizes": rows, "torch_version": "synthetic",
                                                       "nccl_version": "synthetic"}))
    (work / "busbw.out").write_text("".join(f"RESULT size={r['bytes']} iters=20 time_us={r['time_us']:.2f} "
                                            f"algbw_gbs={r['algbw_gbs']:.2f} busbw_gbs={r['busbw_gbs']:.2f}\n"
                                            for r in rows))
    print(f"multigpu_synthetic: wrote {work}")


if __name__ == "__main__":
    main()
