#!/usr/bin/env python3
"""GPU test: DDP training over NCCL on two GPUs, under gpuscope trace (issue 20).

Traces examples/pytorch/ddp_train.py under torchrun (2 ranks, 12 steps, rank 1 sleeping
20 ms before its backward from step 5 on) with --pytorch=ops, then runs the same script under
torch.profiler in separate processes (CUDA 13: one CUPTI client per process). Pass when
(validation/multigpu_check.py's checks, smaller):
  - both ranks are processes of the one trace (processes.rank 0 and 1 = the pids the ranks
    print, world_size 2), each with NCCL kernels on its own GPU, and nccl_sum has an
    AllReduce row on both ranks;
  - per rank, the kernel counts by name over steps 8-11 (kernels starting inside the NVTX
    ranges "step 8".."step 11") equal torch.profiler's over the same steps;
  - stragglers names rank 1 as the rank that held the job back most, from step 5;
  - comm_overlap per rank (summed over the steps) agrees within 2 % of the rank's
    communication with the test's own union arithmetic on the kernels table.
Skipped (77) with fewer than 2 GPUs or without PyTorch.
"""
import re
import sys

import gputest as g

sys.path.insert(0, str(g.REPO / "validation"))
import multigpu_check as m  # noqa: E402

STEPS, SLOW_FROM, DELAY_MS, PROFILE = 12, 5, 20.0, (8, 12)


def report(c, result):
    """Prints a multigpu_check result's checks as this test's checks."""
    for chk in result["checks"]:
        c.check(chk["pass"], f"({result['key']}) {chk['what']}", chk["detail"])
    for title, headers, rows in result["tables"]:
        print(f"  {title}:")
        print(g.indent(m.md_table(headers, rows[:30])))
    for n in result["notes"]:
        print(f"    note: {n}")


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    gpus = m.gpu_count()
    if gpus < 2:
        print(f"skipped: needs 2 GPUs, nvidia-smi -L lists {gpus}")
        sys.exit(g.SKIP)
    g.require_torch()
    c = g.Checks("DDP on 2 GPUs (ddp_train.py under torchrun)")
    gs = g.gpuscope_bin(args.build)
    ddp = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(g.need_file(g.EXAMPLES_PY / "ddp_train.py", "example ddp_train.py")), "--steps", str(STEPS),
           "--slow-rank", "1", "--slow-from", str(SLOW_FROM), "--delay-ms", str(DELAY_MS)]
    r, db = g.trace(args.build, args.scratch, "ddp", ddp, options=["--pytorch=ops"], timeout=120)
    c.require(r.returncode == 0, "gpuscope trace -- torchrun ddp_train.py exits 0", f"exit {r.returncode}")
    # The ranks share stdout: split at every "RESULT " (two lines can run together).
    results = [g.parse_result(chunk.splitlines()[0]) for chunk in re.split(r"(?=RESULT )", r.stdout)
               if chunk.startswith("RESULT ")]
    c.require(len(results) == 2, "both ranks printed RESULT", f"{len(results)} lines")

    t = g.run([*ddp, "--torch-profiler", args.scratch / "torch", "--profile-from", str(PROFILE[0]),
               "--profile-to", str(PROFILE[1])], timeout=120)
    c.check(t.returncode == 0, "the torch.profiler run exits 0", f"exit {t.returncode}")
    torch_jsons = {}
    for rank in (0, 1):
        j = m.load_json(args.scratch / f"torch.rank{rank}.json")
        if j:
            torch_jsons[rank] = j
    c.check(len(torch_jsons) == 2, "torch.profiler's kernel counts of both ranks", f"{len(torch_jsons)} files")

    nccl = m.stats_report(gs, db, "nccl_sum")
    report(c, m.check_ranks_and_counts(db, results, torch_jsons, 2, nccl[0] if nccl else None))
    trace_rows = m.stats_report(gs, db, "collective_trace")
    report(c, m.check_stragglers(m.stats_report(gs, db, "stragglers"), trace_rows[0] if trace_rows else None, 1,
                                 SLOW_FROM, DELAY_MS))
    report(c, m.check_overlap(db, m.stats_report(gs, db, "comm_overlap")))
    g.data_summary(g.open_db(db))
    c.finish()


if __name__ == "__main__":
    main()
