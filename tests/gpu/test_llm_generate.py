#!/usr/bin/env python3
"""GPU test: llm_sum on a generate loop (issue 24).

validation/llm_check.py on the eager batch-1 case: examples/pytorch/llm_generate.py (a
GPT-2-shaped model from a config, random weights; transformers' generate when importable,
else the plain-torch KV-cache loop) under `gpuscope trace --pytorch=ops,modules,shapes`;
llm_sum finds every generation, its batch and token count, and its TTFT and TPOT (mean,
p50) are within 3 % of the program's own synchronized token clock for each generation after
the warm-up. Then `gpuscope stats` (top) names the generate loop.
"""
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
    c.check(r.returncode == 0, "llm_sum's TTFT and TPOT within 3 % of the program's own, every generation after "
            "the warm-up (validation/llm_check.py b1-eager)", f"exit {r.returncode}")
    db = args.scratch / "llm-b1-eager.sqlite"
    if db.exists():
        top = g.run([gs, "stats", db], label="stats top")
        c.check(top.returncode == 0 and "generate loop: 4 generation(s)" in top.stdout,
                "`gpuscope stats` (top) names the generate loop and its 4 generations")
    c.finish()


if __name__ == "__main__":
    main()
