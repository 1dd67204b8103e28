#!/usr/bin/env python3
"""GPU test: gpuscope diff on two runs of examples/cuda/kernel_mix, one kernel made 20 % slower.

Run A: kernel_mix --only fma_loop,transpose_padded,tiny --repeat 10 --fma-iters 20000;
run B: the same with --fma-iters 24000, so fma_loop (compute-bound: 8 chains of `iters`
dependent FMAs per thread) does 20 % more work per launch and the other kernels the same.
Pass when:
  - diff A A calls nothing faster, slower, added or deleted;
  - diff A B calls fma_loop slower ('increased'), with a change between +15 % and +25 %, and no
    other kernel increased, decreased, added or deleted.
"""
import json

import gputest as g

ARGS = ["--only", "fma_loop,transpose_padded,tiny", "--repeat", "10"]


def diff(gpuscope, a, b):
    r = g.run([gpuscope, "diff", a, b, "--top", "0", "--format", "json"])
    if r.returncode != 0:
        return None
    doc = json.loads(r.stdout)["reports"]["trace_diff"]
    cols = [c["name"] + (f" ({c['unit']})" if c["unit"] else "") for c in doc["columns"]]
    for n in doc["notes"]:
        print(f"    note: {n['text']}")
    return [dict(zip(cols, row)) for row in doc["rows"]]


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("gpuscope diff (kernel_mix, fma_loop 20 % slower)")
    gpuscope = g.gpuscope_bin(args.build)
    mix = g.example_bin(args.build, "kernel_mix")
    ra, a = g.trace(args.build, args.scratch, "a", [mix, *ARGS, "--fma-iters", "20000"])
    c.require(ra.returncode == 0, "trace of run A exits 0", f"exit {ra.returncode}")
    rb, b = g.trace(args.build, args.scratch, "b", [mix, *ARGS, "--fma-iters", "24000"])
    c.require(rb.returncode == 0, "trace of run B exits 0", f"exit {rb.returncode}")

    same = diff(gpuscope, a, a)
    c.require(same is not None, "gpuscope diff A A exits 0")
    called = [row for row in same if row["Category"] not in ("unchanged", "unknown")]
    c.check(not called, "diff of a trace against itself calls nothing", str(called[:3]))

    rows = diff(gpuscope, a, b)
    c.require(rows is not None, "gpuscope diff A B exits 0")
    kernels = [row for row in rows if row["Kind"] == "kernel"]
    for row in kernels:
        print(f"    {row['Name'][:50]:50s} {row['Count A']:>4} {row['Count B']:>4} {row['Median A (ns)']} -> "
              f"{row['Median B (ns)']} ns  {row['Change (%)']} %  threshold {row['Threshold (%)']} %  {row['Category']}")
    fma = [row for row in kernels if row["Name"].startswith("fma_loop")]
    c.require(len(fma) == 1, "one fma_loop row", str(len(fma)))
    change = fma[0]["Change (%)"]
    c.check(fma[0]["Category"] == "increased" and change is not None and 15 <= change <= 25,
            "fma_loop is called slower by 15..25 %", f"{fma[0]['Category']}, {change} %")
    others = [row["Name"] for row in kernels
              if not row["Name"].startswith("fma_loop") and row["Category"] not in ("unchanged", "unknown")]
    c.check(not others, "no other kernel is called changed", str(others))
    print(f"RESULT fma_change_pct={change} threshold_pct={fma[0]['Threshold (%)']} other_called={len(others)}")
    c.finish()


if __name__ == "__main__":
    main()
