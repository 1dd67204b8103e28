#!/usr/bin/env python3
"""llm_sum's decode bytes (tensor sizes at trace time) against the DRAM bytes the GPU read.

Issue 24's target: "decode bandwidth from tensor sizes and from `kernels`' measured DRAM bytes
agree within 5 %". For each case (batch size), on the GPT-2-shaped model that
validation/llm_check.py uses (examples/pytorch/llm_generate.py's build(): transformers'
GPT2LMHeadModel from a config where transformers is installed, else the plain-torch decoder;
random weights, nothing downloaded), this script runs itself as the child program twice:

  (a) `gpuscope trace --pytorch=ops,modules,shapes`: a warm-up generation, then the measured
      one; `gpuscope stats -r llm_sum --format json` gives the measured generation's Decode
      Bytes (MB per step: weights + KV cache), and the trace's model ranges give each step's
      bytes (weight_bytes + kv_bytes + the new token's keys and values, as llm_sum counts).
  (b) `gpuscope kernels --metrics dram__bytes_read.sum --nvtx-include llmbw.decode`: the same
      two generations; in the measured one the child wraps each decode forward (a model call
      with one token per sequence, from a forward pre-hook to a forward hook) in the NVTX range
      "llmbw.decode", so only the decode steps' kernels are profiled. Each profiled launch is
      given to the range that holds its launch time (nvtx_events of the kernels trace); Σ
      dram__bytes_read.sum per range = the DRAM bytes that decode step read. Without ranges in
      the trace, the total over the number of decode steps the child counted.
  (c) compares: mean bytes per decode step, llm_sum vs DRAM, and step by step; PASS when the
      mean differs by at most --tolerance % (default 5) of the DRAM bytes.

Expected differences (the table's notes say which apply): llm_sum counts what a step must read
once; the kernels also read activations and, with transformers' DynamicCache, the old KV cache
a second time (torch.cat copies it each step), and read only the gathered rows of the
embedding tables (wte's rows, wpe's rows; the head reads all of wte) — GPT-2's wpe is 1.6 MB
of 249 MB in float16. At batch 1 the weights dominate; at batch 8 the cache copy grows.

Writes OUT/llm_bandwidth_check.md and .json (and the logs of each run: OUT/bw-*.log); the
traces stay in OUT (bw-trace-CASE.sqlite, bw-kernels-CASE.sqlite) unless --remove-traces.
Exit 0 when every case passes, 1 when one fails or a run breaks, 2 when torch with CUDA or the
gpuscope binary is missing.

Usage: llm_bandwidth_check.py GPUSCOPE_BIN OUT_DIR [--cases b1] [--prompt-len 32]
           [--new-tokens 8] [--model auto|hf|plain] [--dtype float16] [--tolerance 5]
           [--timeout 600] [--replay-mode kernel] [--launch-count 0] [--remove-traces]
"""
import argparse
import importlib.util
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_check import have_torch  # noqa: E402  (the same torch-with-CUDA probe)

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples/pytorch/llm_generate.py"
RANGE = "llmbw.decode"
METRIC = "dram__bytes_read.sum"
MODEL_FIELD = ", weight_bytes = "


# ---------------------------------------------------------------- the child (the traced program)
def child(a):
    """Builds the model of llm_generate.py, runs a warm-up generation, then the measured one
    (with --mark, each decode forward inside the NVTX range RANGE); writes --child-out JSON."""
    spec = importlib.util.spec_from_file_location("llm_generate", EXAMPLE)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)  # exits 2 with a message when torch is missing
    torch = gen.torch
    if not torch.cuda.is_available():
        print("llm_bandwidth_check.py: torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    args = argparse.Namespace(model=a.model, vocab=50257, hidden=768, layers=12, heads=12, prompt_len=a.prompt_len,
                              new_tokens=a.new_tokens, compile=False)
    torch.manual_seed(0)
    kind, called, generate = gen.build(args, getattr(torch, a.dtype))
    state = {"mark": False, "open": False, "steps": 0}

    def tokens_of(args_, kwargs):
        ids = kwargs.get("input_ids") if kwargs else None
        if ids is None and args_:
            ids = args_[0]
        return ids.shape[-1] if hasattr(ids, "shape") and len(ids.shape) >= 1 else None

    def pre(module, args_, kwargs):
        if state["mark"] and tokens_of(args_, kwargs) == 1:
            torch.cuda.nvtx.range_push(RANGE)
            state["open"] = True
            state["steps"] += 1

    def post(module, args_, kwargs, out):
        if state["open"]:
            torch.cuda.nvtx.range_pop()
            state["open"] = False

    called.register_forward_pre_hook(pre, with_kwargs=True)
    called.register_forward_hook(post, with_kwargs=True)
    clock = gen.Clock()
    ids = torch.randint(0, args.vocab, (a.batch, a.prompt_len), device="cuda")
    with torch.inference_mode():
        for g in range(2):  # warm-up, measured
            state["mark"] = a.mark and g == 1
            clock.reset()
            generate(ids, a.new_tokens, clock)
            torch.cuda.synchronize()
    Path(a.child_out).write_text(json.dumps({"model": kind, "batch": a.batch, "prompt_len": a.prompt_len,
                                             "new_tokens": a.new_tokens, "dtype": a.dtype,
                                             "marked_decode_steps": state["steps"]}))
    print(f"RESULT model={kind} batch={a.batch} marked_decode_steps={state['steps']}", flush=True)
    return 0


# ---------------------------------------------------------------- reading the two traces
def field(text, key):
    m = re.search(re.escape(key) + r"(\d+)", text)
    return int(m.group(1)) if m else None


def step_bytes(text, tokens=1):
    """What llm_sum counts for one forward from its model range's text (analyze/
    llm_generations.hpp, step_read_bytes): weights + KV cache + the new tokens' KV; None
    without weight_bytes. Also returns the parts (weights, kv)."""
    w = field(text, MODEL_FIELD)
    if w is None:
        return None
    kv = field(text, ", kv_bytes = ") or 0
    held = field(text, ", kv_tokens = ") or 0
    static = (field(text, ", kv_static = ") or 0) != 0
    added = kv / held * tokens if (not static and held > 0) else 0
    return {"bytes": w + kv + round(added), "weights": w, "kv": kv + round(added)}


def trace_steps(db_path, decode_steps):
    """Each forward's bytes from the trace's model ranges (the outermost module calls, in
    order); the last `decode_steps` of them are the measured generation's decode steps."""
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT s.value FROM torch_modules m JOIN nvtx_events e ON e.id = m.nvtx_id JOIN strings s ON "
            "s.id = e.text_id WHERE m.parent_module IS NULL AND e.end_ns IS NOT NULL ORDER BY e.start_ns").fetchall()
    finally:
        con.close()
    texts = [r[0] for r in rows if MODEL_FIELD in r[0]]
    if len(texts) < decode_steps:
        raise RuntimeError(f"the trace has {len(texts)} model calls with weight_bytes, fewer than the "
                           f"{decode_steps} decode steps of the measured generation")
    return [step_bytes(t) for t in texts[len(texts) - decode_steps:]]


def kernels_steps(db_path, expected_steps):
    """DRAM bytes read per decode step from a `gpuscope kernels` trace: Σ METRIC over the
    launches inside each RANGE range (by launch time); without ranges, one entry: the total
    over `expected_steps`. Returns (per-step bytes, launches per step, how it was grouped,
    launches outside every range)."""
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        launches = con.execute(
            "SELECT p.pid, p.launch_ns, m.value FROM kernel_metrics m JOIN kernel_profiles p ON p.id = m.profile_id "
            "JOIN strings n ON n.id = m.metric_id WHERE n.value = ? ORDER BY p.launch_ns", (METRIC,)).fetchall()
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        ranges = []
        if "nvtx_events" in tables:
            ranges = con.execute(
                "SELECT e.pid, e.start_ns, e.end_ns FROM nvtx_events e JOIN strings s ON s.id = e.text_id WHERE "
                "s.value = ? AND e.end_ns IS NOT NULL ORDER BY e.start_ns", (RANGE,)).fetchall()
    finally:
        con.close()
    if not launches:
        raise RuntimeError(f"the kernels trace holds no {METRIC} values: no launch was profiled inside the "
                           f"'{RANGE}' ranges (see the kernels log)")
    if not ranges:
        total = sum(v for _, _, v in launches)
        return [total / expected_steps] * expected_steps, [len(launches) / expected_steps] * expected_steps, \
            f"total / {expected_steps} decode steps (the kernels trace has no '{RANGE}' ranges)", 0
    per, count, outside = [0.0] * len(ranges), [0] * len(ranges), 0
    for pid, t, v in launches:
        for i, (rpid, s, e) in enumerate(ranges):
            if rpid == pid and s <= t <= e:
                per[i] += v
                count[i] += 1
                break
        else:
            outside += 1
    return per, count, f"per '{RANGE}' range ({len(ranges)} ranges)", outside


def llm_sum_rows(gs, db, timeout):
    r = subprocess.run([gs, "stats", str(db), "-r", "llm_sum", "--format", "json"], capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"gpuscope stats -r llm_sum failed ({r.returncode}): {r.stderr.strip()[-800:]}")
    rep = json.loads(r.stdout)["reports"]["llm_sum"]
    cols = [c["name"] for c in rep["columns"]]
    notes = [n["text"] if isinstance(n, dict) else str(n) for n in rep.get("notes", [])]
    return [dict(zip(cols, row)) for row in rep["rows"]], notes


def pct(ours, ref):
    return float("nan") if not ref else 100.0 * (ours - ref) / ref


def compare(name, summary_mb, trace, dram, tolerance):
    """The comparison of one case: mean bytes per decode step from llm_sum (MB) and from the
    trace's ranges against the DRAM bytes per step. Returns (record, failures)."""
    failures = []
    dram_mean = sum(dram) / len(dram)
    trace_mean = sum(s["bytes"] for s in trace) / len(trace)
    rec = {"case": name, "decode_steps": len(trace), "dram_bytes_per_step": dram_mean,
           "trace_bytes_per_step": trace_mean, "llm_sum_decode_bytes_mb": summary_mb,
           "weights_bytes": trace[0]["weights"], "kv_bytes_per_step": sum(s["kv"] for s in trace) / len(trace),
           "diff_pct": pct(trace_mean, dram_mean),
           "llm_sum_diff_pct": pct(summary_mb * 1e6, dram_mean) if summary_mb is not None else None,
           "per_step": [{"trace": t["bytes"], "dram": d, "diff_pct": pct(t["bytes"], d)}
                        for t, d in zip(trace, dram)] if len(dram) == len(trace) else []}
    if summary_mb is None:
        failures.append(f"{name}: llm_sum gave no Decode Bytes for the measured generation")
    elif abs(summary_mb * 1e6 - trace_mean) > max(1.0, 1e-6 * trace_mean):
        failures.append(f"{name}: llm_sum's Decode Bytes {summary_mb:.4f} MB differ from the trace's model ranges "
                        f"({trace_mean / 1e6:.4f} MB)")
    d = rec["llm_sum_diff_pct"] if rec["llm_sum_diff_pct"] is not None else rec["diff_pct"]
    if not abs(d) <= tolerance:
        failures.append(f"{name}: decode bytes per step from tensor sizes {trace_mean / 1e6:.2f} MB vs DRAM "
                        f"{dram_mean / 1e6:.2f} MB ({d:+.2f} %, limit {tolerance} %)")
    return rec, failures


def run_logged(cmd, log, timeout, what):
    with open(log, "w") as f:
        f.write("$ " + " ".join(map(str, cmd)) + "\n")
        f.flush()
        try:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{what} ran past its {timeout} s limit (log: {log})")
    if r.returncode != 0:
        tail = Path(log).read_text(errors="replace").strip().splitlines()[-15:]
        raise RuntimeError(f"{what} exited {r.returncode} (log: {log}):\n    " + "\n    ".join(tail))


def run_case(a, out, name):
    if not re.fullmatch(r"b\d+", name):
        raise RuntimeError(f"bad case '{name}' (want bN: batch N)")
    batch = int(name[1:])
    child_args = ["--batch", str(batch), "--prompt-len", str(a.prompt_len), "--new-tokens", str(a.new_tokens),
                  "--model", a.model, "--dtype", a.dtype]
    me = str(Path(__file__).resolve())
    # (a) trace
    trace = out / f"bw-trace-{name}"
    trace_json = out / f"bw-trace-{name}.child.json"
    run_logged([a.gpuscope, "trace", "-o", str(trace), "-f", "-q", "--pytorch=ops,modules,shapes", "--",
                sys.executable, me, "--child", "--child-out", str(trace_json)] + child_args,
               out / f"bw-trace-{name}.log", a.timeout, "the traced generate run")
    rows, notes = llm_sum_rows(a.gpuscope, f"{trace}.sqlite", min(a.timeout, 300))
    gens = [r for r in rows if r.get("Generation") != "all"]
    if len(gens) != 2:
        raise RuntimeError(f"llm_sum found {len(gens)} generations, the program ran 2 (notes: {notes})")
    measured = gens[1]
    decode_steps = a.new_tokens - 1
    trace_per_step = trace_steps(f"{trace}.sqlite", decode_steps)
    if any(s is None for s in trace_per_step):
        raise RuntimeError("the model's ranges carry no weight_bytes: is this gpuscope's modules hook older than "
                           "issue 24 item 2?")
    # (b) kernels
    kern = out / f"bw-kernels-{name}"
    kern_json = out / f"bw-kernels-{name}.child.json"
    cmd = [a.gpuscope, "kernels", "-o", str(kern), "-f", "--metrics", METRIC, "--nvtx-include", RANGE,
           "--replay-mode", a.replay_mode, "--no-explain"]
    if a.launch_count > 0:
        cmd += ["--launch-count", str(a.launch_count)]
    run_logged(cmd + ["--", sys.executable, me, "--child", "--mark", "--child-out", str(kern_json)] + child_args,
               out / f"bw-kernels-{name}.log", a.timeout, "gpuscope kernels on the generate run")
    marked = json.loads(kern_json.read_text())["marked_decode_steps"]
    if marked != decode_steps:
        raise RuntimeError(f"the child marked {marked} decode steps, expected {decode_steps}")
    dram, launches, grouping, outside = kernels_steps(f"{kern}.sqlite", marked)
    rec, failures = compare(name, measured.get("Decode Bytes"), trace_per_step, dram, a.tolerance)
    rec.update({"batch": batch, "model": json.loads(trace_json.read_text())["model"], "grouping": grouping,
                "launches_per_step": launches, "launches_outside_ranges": outside,
                "llm_sum": {k: measured.get(k) for k in ("Decode Bytes", "Decode BW", "BW of Ceiling", "SOL TPOT",
                                                         "TPOT p50", "Prefill FLOPs", "Prefill Rate")},
                "llm_sum_notes": notes})
    if len(dram) != len(trace_per_step):
        failures.append(f"{name}: {len(dram)} ranges in the kernels trace vs {len(trace_per_step)} decode steps")
    return rec, failures


def markdown(a, records, failures, errors):
    def mb(x):
        return "-" if x is None else f"{x / 1e6:.2f}"
    lines = ["# Decode bytes: llm_sum (tensor sizes) vs gpuscope kernels (dram__bytes_read.sum)", "",
             f"Model: examples/pytorch/llm_generate.py's GPT-2 shape (12 layers, 768 wide, vocabulary 50257), "
             f"{a.dtype}, prompt {a.prompt_len}, {a.new_tokens} new tokens per generation (warm-up + measured); "
             f"tolerance {a.tolerance} %. MB = 10^6 bytes.", "",
             "| case | model | decode steps | weights (MB) | KV per step (MB) | llm_sum Decode Bytes (MB) | "
             "DRAM read per step (MB) | difference | launches per step | grouping |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        d = r["llm_sum_diff_pct"] if r["llm_sum_diff_pct"] is not None else r["diff_pct"]
        lpp = r["launches_per_step"]
        lines.append(f"| {r['case']} | {r['model']} | {r['decode_steps']} | {mb(r['weights_bytes'])} | "
                     f"{mb(r['kv_bytes_per_step'])} | "
                     f"{'-' if r['llm_sum_decode_bytes_mb'] is None else format(r['llm_sum_decode_bytes_mb'], '.2f')}"
                     f" | {mb(r['dram_bytes_per_step'])} | {d:+.2f} % | "
                     f"{sum(lpp) / max(len(lpp), 1):.0f} | {r['grouping']} |")
    for r in records:
        if r["per_step"]:
            lines += ["", f"Per step, {r['case']}: " + ", ".join(
                f"{s['trace'] / 1e6:.2f} vs {s['dram'] / 1e6:.2f} MB ({s['diff_pct']:+.2f} %)" for s in r["per_step"])]
        ls = r["llm_sum"]
        lines += ["", f"llm_sum, {r['case']}: Decode BW {ls.get('Decode BW')} GB/s, BW of Ceiling "
                      f"{ls.get('BW of Ceiling')} %, SOL TPOT {ls.get('SOL TPOT')} ms, TPOT p50 {ls.get('TPOT p50')} ms"]
        lines += [f"- llm_sum: {n}" for n in r["llm_sum_notes"] if n.startswith(("decode", "prefill", "warm generation"))]
    lines += ["", "**" + ("PASS" if not failures and not errors else f"FAIL ({len(failures) + len(errors)})") + "**"]
    lines += [f"- {x}" for x in failures + errors]
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("gpuscope", nargs="?")
    p.add_argument("out", nargs="?")
    p.add_argument("--cases", default="b1", help="comma-separated bN (batch N)")
    p.add_argument("--batch", type=int, default=1, help=argparse.SUPPRESS)  # the child's
    p.add_argument("--prompt-len", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=8)
    p.add_argument("--model", choices=("auto", "hf", "plain"), default="auto")
    p.add_argument("--dtype", choices=("float16", "bfloat16", "float32"), default="float16")
    p.add_argument("--tolerance", type=float, default=5.0, help="largest |difference| judged ok, %%")
    p.add_argument("--timeout", type=int, default=600, help="limit per run (trace, kernels), s")
    p.add_argument("--replay-mode", choices=("kernel", "none"), default="kernel")
    p.add_argument("--launch-count", type=int, default=0, help="gpuscope kernels --launch-count (0: all in ranges)")
    p.add_argument("--remove-traces", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--mark", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--child-out", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        return child(a)
    if not a.gpuscope or not a.out:
        p.error("GPUSCOPE_BIN and OUT_DIR are required")
    if a.new_tokens < 2:
        p.error("--new-tokens must be at least 2 (one prefill, then decode steps)")
    if not Path(a.gpuscope).exists() or not os.access(a.gpuscope, os.X_OK):
        print(f"llm_bandwidth_check.py: no gpuscope binary at {a.gpuscope}", file=sys.stderr)
        return 2
    ok, why = have_torch()
    if not ok:
        print(f"llm_bandwidth_check.py: needs PyTorch with CUDA for {sys.executable}: {why}", file=sys.stderr)
        return 2
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    records, failures, errors = [], [], []
    for name in [c.strip() for c in a.cases.split(",") if c.strip()]:
        try:
            rec, f = run_case(a, out, name)
            records.append(rec)
            failures += f
        except (RuntimeError, json.JSONDecodeError, KeyError, sqlite3.Error, subprocess.TimeoutExpired) as e:
            errors.append(f"{name}: {e}")
        if a.remove_traces:
            for f in out.glob(f"bw-*-{name}.sqlite"):
                f.unlink()
    md = markdown(a, records, failures, errors)
    (out / "llm_bandwidth_check.md").write_text(md)
    (out / "llm_bandwidth_check.json").write_text(json.dumps(
        {"tolerance_pct": a.tolerance, "metric": METRIC, "records": records, "failures": failures, "errors": errors},
        indent=1))
    print(md)
    return 1 if failures or errors else 0


if __name__ == "__main__":
    sys.exit(main())
