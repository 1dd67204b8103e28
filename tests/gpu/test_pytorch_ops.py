#!/usr/bin/env python3
"""GPU test: `gpuscope trace --pytorch` on the CNN example and on torchrun ranks.

1. The CNN example's steps 5-10 (its cudaProfilerStart/Stop window) under torch.profiler
   (validation/torch_profiler_window.py) and, as a separate process, under
   `gpuscope trace --pytorch=ops,modules --capture-range=cudaProfilerApi`: the operator call
   count of every name torch.profiler's key_averages() lists equals gpuscope's (torch_ops);
   every kernel is inside an operator; the model's modules (nn.Sequential "0".."8") and the
   loss module are recorded; each optimizer step is a step (6 in the window); step_sum and
   op_sum run.
2. Operators on a Python thread the program starts after importing torch (20 x.add_(1) on
   it) are recorded, on that thread.
3. examples/pytorch/torchrun_ranks.py with 2 ranks under `python3 -m torch.distributed.run`,
   traced with --pytorch=ops: both ranks report ok=1, and each rank's process has operator
   calls, kernels inside operators, and its 8 optimizer steps.
4. torch.compile(fullgraph=True) of a small model under --pytorch=ops,modules (the module
   wrapper, its C caller known from an eager call first): compiles with no graph break, gives
   the eager result, and the eager calls' module ranges are recorded.
"""
import json
import sys

import gputest as g

# Kernels launched inside an operator call (torch_op_activities also holds copies and sets).
KERNELS_INSIDE = ("SELECT COUNT(*) FROM torch_op_activities t JOIN kernels k ON k.pid = t.pid AND k.correlation_id = "
                  "t.correlation_id")


def cnn(args, c):
    ref_json = args.scratch / "cnn.torch_profiler.json"
    r = g.run([sys.executable, str(g.REPO / "validation/torch_profiler_window.py"), "--out", ref_json, "--",
               str(g.EXAMPLES_PY / "cnn_train.py"), "--steps", "15"], label="torch.profiler")
    c.require(r.returncode == 0, "torch.profiler run exits 0", f"exit {r.returncode}")
    ref = json.loads(ref_json.read_text())["ops"]
    r, db = g.trace(args.build, args.scratch, "cnn-ops", g.pyexample("cnn_train.py") + ["--steps", "15"],
                    options=["--pytorch=ops,modules", "--capture-range=cudaProfilerApi"])
    c.require(r.returncode == 0, "gpuscope trace --pytorch=ops,modules exits 0", f"exit {r.returncode}")
    con = g.open_db(db)
    ours = {row["name"]: row["n"] for row in g.query(con, "SELECT name, COUNT(*) AS n FROM v_torch_ops GROUP BY name")}
    differ = {n: (ours.get(n, 0), v["count"]) for n, v in ref.items() if ours.get(n, 0) != v["count"]}
    c.check(len(ref) > 40 and not differ, f"call counts equal torch.profiler's for all {len(ref)} operator names",
            f"gpuscope vs torch.profiler differ: {differ}")
    kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels")
    inside = g.scalar(con, KERNELS_INSIDE)
    c.check(kernels > 0 and inside == kernels, "every kernel is inside an operator", f"{inside} of {kernels}")
    paths = {row["path"] for row in g.query(con, "SELECT DISTINCT path FROM v_torch_modules")}
    c.check({"Sequential", "0", "8", "CrossEntropyLoss"} <= paths, "modules Sequential, 0..8, CrossEntropyLoss",
            str(sorted(paths)))
    c.equal("optimizer steps in the window", 6, g.scalar(con, "SELECT COUNT(*) FROM torch_steps"))
    for report in ("op_sum", "module_sum", "step_sum"):
        r = g.run([g.gpuscope_bin(args.build), "stats", db, "-r", report], label=report)
        c.check(r.returncode == 0, f"stats -r {report} exits 0", f"exit {r.returncode}")


THREAD_SCRIPT = """
import threading
import torch
x = torch.zeros(64, device="cuda")
def work():
    for _ in range(20):
        x.add_(1)
t = threading.Thread(target=work)
t.start()
t.join()
torch.cuda.synchronize()
print(f"RESULT ok={int(x[0].item() == 20)} main_tid={threading.get_native_id()}")
"""


def thread(args, c):
    script = args.scratch / "thread_ops.py"
    script.write_text(THREAD_SCRIPT)
    r, db = g.trace(args.build, args.scratch, "thread", [sys.executable, str(script)], options=["--pytorch=ops"])
    c.require(r.returncode == 0, "gpuscope trace of a program with a worker thread exits 0", f"exit {r.returncode}")
    res = g.parse_result(g.result_lines(r.stdout)[-1])
    c.require(res.get("ok") == "1", "the thread's adds ran", str(res))
    con = g.open_db(db)
    on_thread = g.scalar(con, "SELECT COUNT(*) FROM v_torch_ops WHERE name = 'aten::add_' AND tid != ?",
                         (int(res["main_tid"]),))
    c.equal("aten::add_ calls recorded on the worker thread", 20, on_thread)
    kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels")
    inside = g.scalar(con, KERNELS_INSIDE)
    c.check(kernels >= 21 and inside == kernels, "every kernel is inside an operator", f"{inside} of {kernels}")


COMPILE_SCRIPT = """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Sequential(nn.Linear(64, 8), nn.GELU())).cuda()
x = torch.randn(16, 64, device="cuda")
eager = model(x)  # every module known to the wrapper's C caller before dynamo traces it
compiled = torch.compile(model, backend="aot_eager", fullgraph=True)  # a graph break raises
out = [compiled(x) for _ in range(3)]
torch.cuda.synchronize()
print(f"RESULT ok={int(all(torch.allclose(o, eager) for o in out))}")
"""


def compiled(args, c):
    script = args.scratch / "compile_modules.py"
    script.write_text(COMPILE_SCRIPT)
    r, db = g.trace(args.build, args.scratch, "compile", [sys.executable, str(script)],
                    options=["--pytorch=ops,modules"])
    c.require(r.returncode == 0, "torch.compile(fullgraph=True) under --pytorch=ops,modules exits 0",
              f"exit {r.returncode}: {r.stderr[-2000:]}")
    res = g.parse_result(g.result_lines(r.stdout)[-1])
    c.check(res.get("ok") == "1", "the compiled model gives the eager result", str(res))
    con = g.open_db(db)
    paths = {row["path"] for row in g.query(con, "SELECT DISTINCT path FROM v_torch_modules")}
    c.check({"Sequential", "0", "1", "2", "2.0", "2.1"} <= paths, "the eager call's module ranges", str(sorted(paths)))


def torchrun(args, c):
    target = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
              str(g.EXAMPLES_PY / "torchrun_ranks.py"), "--steps", "8"]
    r, db = g.trace(args.build, args.scratch, "torchrun", target, options=["--pytorch=ops"])
    c.require(r.returncode == 0, "gpuscope trace of torchrun (2 ranks) exits 0", f"exit {r.returncode}")
    ranks = [g.parse_result(line) for line in g.result_lines(r.stdout)]
    c.require(len(ranks) == 2 and all(x.get("ok") == "1" for x in ranks), "2 ranks reported ok=1", str(ranks))
    con = g.open_db(db)
    for x in ranks:
        pid = int(x["pid"])
        ops = g.scalar(con, "SELECT COUNT(*) FROM torch_ops WHERE pid = ?", (pid,))
        kernels = g.scalar(con, "SELECT COUNT(*) FROM kernels WHERE pid = ?", (pid,))
        inside = g.scalar(con, KERNELS_INSIDE + " WHERE t.pid = ?", (pid,))
        steps = g.scalar(con, "SELECT COUNT(*) FROM torch_steps WHERE pid = ?", (pid,))
        c.check(ops > 100, f"rank {x['rank']} (pid {pid}) has operator calls", str(ops))
        c.check(kernels > 0 and inside == kernels, f"rank {x['rank']}: every kernel inside an operator",
                f"{inside} of {kernels}")
        c.equal(f"rank {x['rank']}: optimizer steps", 8, steps)


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks("gpuscope trace --pytorch")
    cnn(args, c)
    thread(args, c)
    compiled(args, c)
    torchrun(args, c)
    c.finish()


if __name__ == "__main__":
    main()
