#!/usr/bin/env python3
"""llm_sum's TTFT and TPOT against what the generating program measures itself.

For each case (batch x eager/compiled), runs examples/pytorch/llm_generate.py (a GPT-2-shaped
model from a config, random weights; a streamer that synchronizes at each token and writes
its own times) under `gpuscope trace --pytorch=ops,modules,shapes`, then `gpuscope stats -r
llm_sum --format json`, and compares generation by generation:
  TTFT       every generation, the first (cold: compilation, cuDNN plans, the allocator) too.
             With transformers' generate() (--model hf): the program's clock around
             generate() (called → token 1 on the host) against llm_sum's (the generate() call,
             gpuscope's range around it → GPU end of token 1's work). With the plain-torch loop
             (no generate()): both from the prefill's model call (the program's forward pre-hook).
  TPOT mean  and p50, of the token-to-token intervals, the warm generations (the first is
             shown, not judged)
  Output     tokens per generation (must be equal), Batch (must be equal)
Prints a side-by-side table per case; exit 1 when a judged value is more than --tolerance %
(default 3) off or a count differs, 2 when torch (with CUDA) or the gpuscope binary is
missing, 0 otherwise. Writes OUT/llm_check.md and .json.

Usage: llm_check.py GPUSCOPE_BIN OUT_DIR [--cases b1-eager,b8-eager,b1-compile,b8-compile]
                    [--generations 4] [--new-tokens 32] [--prompt-len 32] [--model auto]
                    [--pytorch ops,modules,shapes] [--tolerance 3]
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples/pytorch/llm_generate.py"
ALL_CASES = "b1-eager,b8-eager,b1-compile,b8-compile"


def have_torch():
    r = subprocess.run([sys.executable, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)"],
                       capture_output=True, text=True)
    if r.returncode == 0:
        return True, ""
    return False, (r.stderr.strip().splitlines() or ["torch.cuda.is_available() is False"])[-1]


def parse_case(name):
    b, mode = name.split("-")
    if not b.startswith("b") or mode not in ("eager", "compile"):
        raise SystemExit(f"llm_check.py: bad case '{name}' (want bN-eager or bN-compile)")
    return int(b[1:]), mode == "compile"


def llm_sum(gs, db):
    r = subprocess.run([gs, "stats", str(db), "-r", "llm_sum", "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"gpuscope stats -r llm_sum failed: {r.stderr.strip()[-800:]}")
    rep = json.loads(r.stdout)["reports"]["llm_sum"]
    cols = [c["name"] for c in rep["columns"]]
    rows = [dict(zip(cols, row)) for row in rep["rows"]]
    notes = [n["text"] if isinstance(n, dict) else str(n) for n in rep.get("notes", [])]
    return [row for row in rows if row["Generation"] != "all"], notes


def pct(ours, ref):
    return float("nan") if ref in (None, 0) or ours is None else 100.0 * (ours - ref) / ref


def percentile(xs, p):
    xs = sorted(xs)
    r = p / 100 * (len(xs) - 1)
    lo = int(r)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (r - lo)


def run_case(a, out, name):
    batch, compiled = parse_case(name)
    ref_json = out / f"{name}.program.json"
    trace = out / f"llm-{name}"
    cmd = [a.gpuscope, "trace", "-o", str(trace), "-f", "-q", f"--pytorch={a.pytorch}", "--", sys.executable,
           str(EXAMPLE), "--batch", str(batch), "--generations", str(a.generations), "--new-tokens", str(a.new_tokens),
           "--prompt-len", str(a.prompt_len), "--model", a.model, "--out", str(ref_json)]
    if compiled:
        cmd.append("--compile")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    if r.returncode != 0:
        raise RuntimeError(f"traced llm_generate.py exited {r.returncode}: {(r.stderr or r.stdout).strip()[-1500:]}")
    prog = json.loads(ref_json.read_text())
    ours, notes = llm_sum(a.gpuscope, f"{trace}.sqlite")
    lines, failures, records = [], [], []
    lines.append(f"### {name}: model {prog['model']}, batch {batch}, prompt {a.prompt_len}, "
                 f"{a.new_tokens} new tokens, {'torch.compile' if compiled else 'eager'}")
    lines.append("")
    if len(ours) != len(prog["generations"]):
        failures.append(f"{name}: llm_sum found {len(ours)} generations, the program ran {len(prog['generations'])}")
    # The request llm_sum starts TTFT from: generate() where the program calls it (hf), else the model call.
    from_generate = prog["model"] == "hf"
    lines.append(f"TTFT from {'the call to generate()' if from_generate else 'the prefill model call'} on both "
                 "clocks, judged for every generation; TPOT judged after the first (warm-up).")
    lines.append("")
    lines.append("| gen | | TTFT prog (ms) | TTFT llm_sum (ms) | diff | TPOT mean prog | llm_sum | diff | "
                 "TPOT p50 prog | llm_sum | diff | tokens prog/llm_sum | batch |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for i, (g, row) in enumerate(zip(prog["generations"], ours)):
        judged = i > 0
        tp = g["tpot_ms"]
        ref = {"ttft": g["ttft_from_generate_ms"] if from_generate else g["ttft_ms"],
               "tpot_mean": sum(tp) / len(tp) if tp else None, "tpot_p50": percentile(tp, 50) if tp else None}
        got = {"ttft": row.get("TTFT"), "tpot_mean": row.get("TPOT Mean"), "tpot_p50": row.get("TPOT p50")}
        diffs = {k: pct(got[k], ref[k]) for k in ref}
        tokens_ok = row.get("Output") == len(g["token_times_ns"])
        batch_ok = row.get("Batch") == batch if "shapes" in a.pytorch else row.get("Batch") in (None, batch)
        if not (abs(diffs["ttft"]) <= a.tolerance):
            failures.append(f"{name} generation {i + 1} ({'warm' if judged else 'cold'}): ttft llm_sum {got['ttft']} "
                            f"ms vs program {ref['ttft']} ms ({diffs['ttft']:+.2f} %, limit {a.tolerance} %)")
        if judged:
            for k, d in diffs.items():
                if k != "ttft" and not (abs(d) <= a.tolerance):
                    failures.append(f"{name} generation {i + 1}: {k} llm_sum {got[k]} ms vs program {ref[k]} ms "
                                    f"({d:+.2f} %, limit {a.tolerance} %)")
            if not tokens_ok:
                failures.append(f"{name} generation {i + 1}: {row.get('Output')} tokens vs {len(g['token_times_ns'])}")
            if not batch_ok:
                failures.append(f"{name} generation {i + 1}: batch {row.get('Batch')} vs {batch}")

        def f(x):
            return "-" if x is None else f"{x:.3f}"
        lines.append(f"| {i + 1} | {'warm' if judged else 'cold'} | {f(ref['ttft'])} | {f(got['ttft'])} | "
                     f"{diffs['ttft']:+.2f} % | {f(ref['tpot_mean'])} | {f(got['tpot_mean'])} | "
                     f"{diffs['tpot_mean']:+.2f} % | {f(ref['tpot_p50'])} | {f(got['tpot_p50'])} | "
                     f"{diffs['tpot_p50']:+.2f} % | {len(g['token_times_ns'])}/{row.get('Output')} | "
                     f"{row.get('Batch')} |")
        records.append({"case": name, "generation": i + 1, "warm": judged, "program": ref, "llm_sum": got,
                        "diff_pct": diffs, "tokens": [len(g["token_times_ns"]), row.get("Output")],
                        "batch": row.get("Batch"), "ttft_from": "generate" if from_generate else "model call",
                        "ttft_from_generate_ms": g["ttft_from_generate_ms"],
                        "ttft_from_model_call_ms": g["ttft_ms"]})
    lines.append("")
    lines += [f"- llm_sum: {n}" for n in notes]
    lines.append("")
    return lines, failures, records


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("gpuscope")
    p.add_argument("out")
    p.add_argument("--cases", default=ALL_CASES)
    p.add_argument("--generations", type=int, default=4)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--prompt-len", type=int, default=32)
    p.add_argument("--model", choices=("auto", "hf", "plain"), default="auto")
    p.add_argument("--pytorch", default="ops,modules,shapes", help="what `gpuscope trace --pytorch=` records")
    p.add_argument("--tolerance", type=float, default=3.0, help="largest |difference| judged ok, %%")
    p.add_argument("--timeout", type=int, default=600)
    a = p.parse_args()
    if not Path(a.gpuscope).exists() or not os.access(a.gpuscope, os.X_OK):
        print(f"llm_check.py: no gpuscope binary at {a.gpuscope}", file=sys.stderr)
        return 2
    ok, why = have_torch()
    if not ok:
        print(f"llm_check.py: needs PyTorch with CUDA for {sys.executable}: {why}", file=sys.stderr)
        return 2
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = ["# llm_sum vs the program's own token clock", "",
             f"Tolerance {a.tolerance} %; `gpuscope trace --pytorch={a.pytorch}`; TTFT judged for every "
             "generation (the first is cold), TPOT for the warm ones.", ""]
    failures, records = [], []
    for name in a.cases.split(","):
        try:
            l, f, rec = run_case(a, out, name.strip())
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as e:
            l, f, rec = [f"### {name}", "", f"failed: {e}", ""], [f"{name}: {e}"], []
        lines += l
        failures += f
        records += rec
        print("\n".join(l), flush=True)
    lines.append("**" + ("PASS" if not failures else f"FAIL ({len(failures)})") + "**")
    lines += [f"- {x}" for x in failures]
    (out / "llm_check.md").write_text("\n".join(lines) + "\n")
    (out / "llm_check.json").write_text(json.dumps({"tolerance_pct": a.tolerance, "records": records,
                                                    "failures": failures}, indent=1))
    print("PASS" if not failures else "FAIL:\n  " + "\n  ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
