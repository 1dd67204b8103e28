#!/usr/bin/env python3
"""GPU test: llm_sum on a generate loop (issue 24).

validation/llm_check.py on the eager batch-1 case: examples/pytorch/llm_generate.py (a
GPT-2-shaped model from a config, random weights; transformers' generate when importable,
else the plain-torch KV-cache loop) under `gpuscope trace --pytorch=ops,modules,shapes`;
llm_sum finds every generation, its batch and token count; its TTFT is within 3 % of the
program's own synchronized clock around generate() (the plain loop: from its model call) for
every generation, the cold first one too, and its TPOT (mean, p50) for each generation after
the warm-up. Then `gpuscope stats` (top) names the generate loop, and llm_sum's bytes and
FLOPs are those of the model: Decode Bytes (weights + KV cache) 240-270 MB per step (GPT-2
small in float16: 249 MB of weights, 37 KB of cache per position), a speed-of-light TPOT and a
bandwidth share of the DRAM ceiling in (0, 100] %, a prefill of 4-10 GFLOP (32 tokens through
85 M parameters of blocks, 2 FLOP each, plus the head and attention). `gpuscope report` of the
trace has a Tokens chart per generation with one step segment per forward.
"""
import json
import sys

import gputest as g


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks("llm_generate")
    gs = g.gpuscope_bin(args.build)
    r = g.run([sys.executable, str(g.REPO / "validation/llm_check.py"), gs, args.scratch, "--cases", "b1-eager",
               "--generations", "4", "--new-tokens", "24"], timeout=280, label="llm_check.py")
    c.check(r.returncode == 0, "llm_sum's TTFT within 3 % of the program's clock around generate(), cold and warm, "
            "and TPOT after the warm-up (validation/llm_check.py b1-eager)", f"exit {r.returncode}")
    db = args.scratch / "llm-b1-eager.sqlite"
    if db.exists():
        top = g.run([gs, "stats", db], label="stats top")
        # top judges the steady window: the cold first generation is a warm-up it leaves out, and says so.
        names_all = "generate loop: 4 generation(s)" in top.stdout
        names_warm = "generate loop: 3 generation(s)" in top.stdout and "1 warm-up left out" in top.stdout
        c.check(top.returncode == 0 and (names_all or names_warm),
                "`gpuscope stats` (top) names the generate loop and its 4 generations (3 past the warm-up it "
                "leaves out)")
        r = g.run([gs, "stats", db, "-r", "llm_sum", "--format", "json"], label="stats llm_sum")
        try:
            rep = json.loads(r.stdout)["reports"]["llm_sum"]
            cols = [x["name"] for x in rep["columns"]]
            row = dict(zip(cols, rep["rows"][-1]))  # "all"
        except (ValueError, KeyError, IndexError) as e:
            row = {}
            c.check(False, "llm_sum --format json is readable", repr(e))
        mb, sol, share, gflop = (row.get(k) for k in ("Decode Bytes", "SOL TPOT", "BW of Ceiling", "Prefill FLOPs"))
        c.check(mb is not None and 240 <= mb <= 270, "Decode Bytes is the model's weights + KV cache (240-270 MB)",
                f"{mb} MB")
        c.check(sol is not None and sol > 0 and share is not None and 0 < share <= 100,
                "a speed-of-light TPOT and a share of the DRAM ceiling", f"SOL {sol} ms, {share} %")
        c.check(gflop is not None and 4 <= gflop <= 10, "Prefill FLOPs of a 32-token GPT-2 prefill (4-10 GFLOP)",
                f"{gflop} GFLOP")
        # gpuscope report's Tokens section: one chart per generation, one segment per forward.
        gens = [dict(zip(cols, x)) for x in rep.get("rows", [])[:-1]] if row else []
        html = args.scratch / "llm-b1-eager.html"
        r = g.run([gs, "report", db, "-o", html, "-f", "--no-timeline"], label="report")
        page = html.read_text(errors="replace") if r.returncode == 0 and html.exists() else ""
        forwards = sum(int(x.get("Output") or 0) for x in gens[:8])
        charts = page.count('<svg class="token-timeline"')
        segments = page.count('<g class="token-step')
        prefills = page.count('data-kind="prefill"')
        c.check(len(gens) > 0 and charts == min(len(gens), 8), "gpuscope report has a Tokens chart per generation",
                f"{charts} charts, {len(gens)} generations")
        c.check(segments == forwards and prefills == charts,
                "one step segment per forward (a prefill then decode steps) in each chart",
                f"{segments} segments, {forwards} forwards, {prefills} prefills")
    c.finish()


if __name__ == "__main__":
    main()
