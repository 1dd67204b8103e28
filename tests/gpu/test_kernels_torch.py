#!/usr/bin/env python3
"""GPU test: `gpuscope kernels --nvtx-include` on a PyTorch program.

PyTorch loads the CUDA runtime as a shared library, so gpuscope asks the target's own
runtime for each runtime launch's registers per thread and static shared memory
(cudaFuncGetAttributes at the launch's exit, without leaving an error the program would read). The program launches torch.add 3 times, torch.mul 3 times inside the NVTX push/pop
range "hot", then torch.add 3 times. Pass when: exit 0, the program's result is (1+3)*8+3 = 35,
exactly the 3 torch.mul launches are profiled, each with registers per thread > 0, and the
quick set's six metrics are there for each.
"""
import sys

import gputest as g

QUICK = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
         "l1tex__t_bytes.sum", "sm__warps_active.avg.pct_of_peak_sustained_active"]


def kernels(args, name, options, target, timeout=300):
    cmd = [g.gpuscope_bin(args.build), "kernels", *options, "-o", args.scratch / name, "-f", "--", *target]
    return g.run(cmd, timeout=timeout), args.scratch / f"{name}.sqlite"


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks("gpuscope kernels --nvtx-include on PyTorch")
    code = ("import torch\n"
            "x = torch.ones(1 << 20, device='cuda')\n"
            "for _ in range(3): x = torch.add(x, 1)\n"
            "torch.cuda.nvtx.range_push('hot')\n"
            "for _ in range(3): x = torch.mul(x, 2)\n"
            "torch.cuda.nvtx.range_pop()\n"
            "for _ in range(3): x = torch.add(x, 1)\n"
            "torch.cuda.synchronize()\n"
            "print('RESULT value=%g' % x[0].item())\n")
    run, db = kernels(args, "torch_nvtx", ["--set", "quick", "--nvtx-include", "hot"],
                      [sys.executable, "-c", code])
    c.require(run.returncode == 0, "gpuscope kernels --nvtx-include hot -- python3 (torch) exits 0",
              f"exit {run.returncode}\n{g.tail(run.stderr)}")
    c.check("value=35" in run.stdout, "the torch program computed (1+3)*8+3 = 35", g.tail(run.stdout, 3))
    con = g.open_db(db)
    rows = g.query(con, "SELECT p.id, p.launch_index, p.registers_per_thread, n.value AS name FROM kernel_profiles p "
                        "LEFT JOIN strings n ON n.id = p.name_id ORDER BY p.launch_index")
    c.check(len(rows) == 3 and all("Mul" in (r["name"] or "") for r in rows),
            "exactly the 3 torch.mul launches inside 'hot' are profiled", str([(r["name"] or "")[:80] for r in rows]))
    c.check(bool(rows) and all((r["registers_per_thread"] or 0) > 0 for r in rows),
            "registers per thread known (cudaFuncGetAttributes of the shared runtime)",
            str([r["registers_per_thread"] for r in rows]))
    have = {}
    for r in g.query(con, "SELECT profile_id, metric, value FROM v_kernel_metrics"):
        if r["value"] is not None:
            have.setdefault(r["profile_id"], set()).add(r["metric"])
    c.check(bool(rows) and all(have.get(r["id"], set()) >= set(QUICK) for r in rows),
            "the six quick metrics on each profiled launch", str({k: sorted(v) for k, v in have.items()}))
    con.close()
    c.finish()


if __name__ == "__main__":
    main()
