#!/usr/bin/env python3
"""GPU test: Python call sites of CUDA calls (gpuscope trace --python-callsites).

Traces a PyTorch script (written to the scratch folder) whose loop calls .item() in two named
functions at known lines, copies to the CPU at a third and synchronizes at a fourth. Pass when:
  - with --python-callsites=sync: every .item() of the loop (20 per site) is an
    API call whose nearest frame in the script is that .item()'s line and function, and so are
    the .cpu() copies and the final torch.cuda.synchronize() (through torch's own frames);
  - every py_stacks row's parent chain ends at depth 0 and py_frames of the script have a
    file, a function and a line; no py_frames_unresolved loss for the script's frames;
  - with --python-callsites=none: no stack at all; with =all: kernel launches have stacks too;
  - a C++ program (examples/cuda/vector_add) is unchanged: no Python stack, no message
    about Python.
"""
import sys
import textwrap

import gputest as g

STEPS = 20

SCRIPT = textwrap.dedent(
    f"""
    import torch

    x = torch.ones(1 << 16, device="cuda")


    def loss_value(t):
        return t.sum().item()  # @item_loss


    def metric(t):
        return (t * 2).mean().item()  # @item_metric


    for step in range({STEPS}):
        y = x * step
        a = loss_value(y)
        b = metric(y)
        c = y.cpu()  # @copy
    torch.cuda.synchronize()  # @sync
    print("RESULT done=1")
    """
)

# The frame of the script nearest to the call (a call through torch's Python code has torch's
# frames inside it): walk each call's stack up until a frame of the script.
NEAREST = """
WITH RECURSIVE up(call_id, stack_id, depth_up) AS (
  SELECT a.id, a.py_stack_id, 0 FROM api_calls a WHERE a.py_stack_id IS NOT NULL
  UNION ALL
  SELECT up.call_id, k.parent_id, up.depth_up + 1 FROM up JOIN py_stacks k ON k.id = up.stack_id
  JOIN py_frames f ON f.id = k.frame_id JOIN strings s ON s.id = f.file_id
  WHERE s.value != :script AND k.parent_id IS NOT NULL
)
SELECT n.value AS call, f.line AS line, fn.value AS function, COUNT(*) AS calls
FROM up JOIN py_stacks k ON k.id = up.stack_id JOIN py_frames f ON f.id = k.frame_id
JOIN strings s ON s.id = f.file_id JOIN strings fn ON fn.id = f.function_id
JOIN api_calls a ON a.id = up.call_id JOIN strings n ON n.id = a.name_id
WHERE s.value = :script
GROUP BY call, line, function ORDER BY line, call
"""


def marker_lines(text):
    return {line.split("# @")[1].strip(): number for number, line in enumerate(text.splitlines(), 1) if "# @" in line}


def main():
    args = g.parse_args(__doc__)
    g.require_gpu()
    g.require_torch()
    c = g.Checks("python call sites")
    script = args.scratch / "item_loop.py"
    script.write_text(SCRIPT)
    lines = marker_lines(SCRIPT)
    r, db = g.trace(args.build, args.scratch, "sites", [sys.executable, script], options=["--python-callsites=sync"])
    c.require(r.returncode == 0 and "RESULT done=1" in r.stdout, "traced script runs")
    con = g.open_db(db)
    g.data_summary(con)
    rows = g.show(con, "calls by nearest script line", NEAREST, {"script": str(script)}, limit=40)
    by_line = {}
    for row in rows:
        by_line.setdefault(row["line"], []).append(row)
    for name, function, least in (("item_loss", "loss_value", STEPS), ("item_metric", "metric", STEPS),
                                  ("copy", "<module>", STEPS), ("sync", "<module>", 1)):
        at = by_line.get(lines[name], [])
        calls = sum(row["calls"] for row in at)
        c.check(calls >= least and all(row["function"] == function for row in at),
                f"{name}: calls at line {lines[name]} in {function}", f"{calls} calls, expected >= {least}: {at}")
    c.check(
        any("Synchronize" in row["call"] for row in by_line.get(lines["sync"], [])),
        "torch.cuda.synchronize() is a synchronize call at its line",
    )
    c.equal("no stack with a broken parent chain", 0,
            g.scalar(con, "SELECT COUNT(*) FROM py_stacks k LEFT JOIN py_stacks p ON p.id = k.parent_id "
                          "WHERE k.parent_id IS NOT NULL AND (p.id IS NULL OR p.depth != k.depth - 1)"))
    c.equal("script frames all resolved", 0,
            g.scalar(con, "SELECT COUNT(*) FROM py_frames f JOIN strings s ON s.id = f.file_id "
                          "WHERE s.value = ? AND (f.line IS NULL OR f.function_id IS NULL)", (str(script),)))
    launches_with_stack = ("SELECT COUNT(*) FROM api_calls a JOIN strings n ON n.id = a.name_id "
                           "WHERE n.value LIKE '%Launch%' AND a.py_stack_id IS NOT NULL")
    c.equal("sync mode: launches have no stack", 0, g.scalar(con, launches_with_stack))

    r, db = g.trace(args.build, args.scratch, "sites_none", [sys.executable, script],
                    options=["--python-callsites=none"])
    c.require(r.returncode == 0, "traced script runs with --python-callsites=none")
    con = g.open_db(db)
    c.equal("none: no stacks", 0, g.scalar(con, "SELECT COUNT(*) FROM api_calls WHERE py_stack_id IS NOT NULL"))

    r, db = g.trace(args.build, args.scratch, "sites_all", [sys.executable, script], options=["--python-callsites=all"])
    c.require(r.returncode == 0, "traced script runs with --python-callsites=all")
    con = g.open_db(db)
    c.check(g.scalar(con, launches_with_stack) >= 2 * STEPS, "all: kernel launches have stacks",
            f"{g.scalar(con, launches_with_stack)} launches with a stack")

    exe = g.example_bin(args.build, "vector_add")
    r, db = g.trace(args.build, args.scratch, "cpp", [exe])
    c.require(r.returncode == 0, "a C++ program traces")
    con = g.open_db(db)
    c.equal("C++: no Python stacks", 0, g.scalar(con, "SELECT COUNT(*) FROM py_stacks"))
    c.equal("C++: no message about Python", 0,
            g.scalar(con, "SELECT COUNT(*) FROM messages WHERE text LIKE '%Python%'"))
    c.finish()


if __name__ == "__main__":
    main()
