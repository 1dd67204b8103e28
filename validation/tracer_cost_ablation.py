#!/usr/bin/env python3
"""Per-call cost of each part of the collector, measured with little noise.

Runs `gpuscope __calibrate-child` (the loop `gpuscope trace` calibrates with: 30 blocks of
200 <<<1,1>>> kernel launches and 30 blocks of 200 cudaEventRecord calls, after 200 ms of
warm-up) without the collector and with the collector in each configuration below,
alternating, --rounds rounds. The fastest block of each configuration over all rounds is the
least disturbed one; its ns per call minus the untraced fastest block's is what that
configuration costs per launch (and per other API call). Writes OUT.md and OUT.json.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CONFIGS = {
    "untraced": None,
    "collector, CUPTI off (-t nvtx)": {"GPUSCOPE_TRACE": "nvtx"},
    "CUPTI attached, nothing recorded": {"GPUSCOPE_CUDA_RECORDS": "none"},
    "kernel records only": {"GPUSCOPE_CUDA_RECORDS": "kernel"},
    "API callbacks only (--cuda-api gpu)": {"GPUSCOPE_CUDA_RECORDS": "runtime,driver"},
    "kernel + API callbacks": {"GPUSCOPE_CUDA_RECORDS": "kernel,runtime,driver"},
    "kernel + runtime-API callbacks only": {"GPUSCOPE_CUDA_RECORDS": "kernel,runtime"},
    "kernel + driver-API callbacks only": {"GPUSCOPE_CUDA_RECORDS": "kernel,driver"},
    "+ memcpy, memset": {"GPUSCOPE_CUDA_RECORDS": "kernel,runtime,driver,memcpy,memcpy_peer,memset"},
    "default (+ overhead)": {},
    "default + sync records": {"GPUSCOPE_CUDA_RECORDS": "kernel,memcpy,memcpy_peer,memset,runtime,driver,sync,overhead"},
    "--cuda-api all (CUPTI API records)": {"GPUSCOPE_API_CALLS": "all"},
    "--cuda-api all, runtime kind only": {"GPUSCOPE_API_CALLS": "all", "GPUSCOPE_CUDA_RECORDS": "kernel,runtime"},
}


def run(gs, inject, env_extra, out, logs):
    env = dict(os.environ)
    env.pop("CUDA_INJECTION64_PATH", None)
    if env_extra is not None:
        env.update({"CUDA_INJECTION64_PATH": str(inject), "GPUSCOPE_LOG_DIR": str(logs)})
        env.update(env_extra)
    r = subprocess.run([str(gs), "__calibrate-child", str(out)], env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None, r.stderr.strip()[-300:]
    samples = {"launch": [], "api": []}
    for line in Path(out).read_text().splitlines():
        kind, value = line.split()
        samples[kind].append(float(value))
    return samples, None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--out", default="tracer_cost_ablation")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", nargs="*", help="configurations to run (untraced always runs)")
    args = p.parse_args()
    build = Path(args.build).resolve()
    gs, inject = build / "bin" / "gpuscope", build / "lib" / "libgpuscope_inject.so"
    configs = {k: v for k, v in CONFIGS.items() if not args.only or k == "untraced" or k in args.only}
    best = {name: {"launch": [], "api": []} for name in configs}
    errors = {}
    with tempfile.TemporaryDirectory(prefix="gpuscope-ablation-") as tmp:
        for rnd in range(args.rounds):
            for i, (name, extra) in enumerate(configs.items()):
                logs = Path(tmp) / f"logs{rnd}_{i}"
                logs.mkdir()
                samples, err = run(gs, inject, extra, Path(tmp) / "out", logs)
                if err:
                    errors[name] = err
                    continue
                for k in ("launch", "api"):
                    best[name][k].append(min(samples[k]))
                print(f"round {rnd + 1} {name:40s} launch {min(samples['launch']):7.0f} ns  "
                      f"event record {min(samples['api']):7.0f} ns", flush=True)
    base = {k: min(best["untraced"][k]) for k in ("launch", "api")} if best["untraced"]["launch"] else None
    rows = []
    for name in configs:
        if not best[name]["launch"] or base is None:
            rows.append((name, None, None, None, None))
            continue
        launch, api = min(best[name]["launch"]), min(best[name]["api"])
        rows.append((name, launch, launch - base["launch"], api, api - base["api"]))
    lines = ["# Tracer cost per call, by collector configuration", "",
             f"Fastest of {args.rounds} x 30 blocks of 200 calls each (`gpuscope __calibrate-child`), ns per call.", "",
             "| configuration | launch (ns) | added per launch (ns) | cudaEventRecord (ns) | added per call (ns) |",
             "|---|---:|---:|---:|---:|"]
    for name, launch, dl, api, da in rows:
        if launch is None:
            lines.append(f"| {name} | failed: {errors.get(name, '')} | | | |")
        else:
            lines.append(f"| {name} | {launch:.0f} | {dl:+.0f} | {api:.0f} | {da:+.0f} |")
    md = "\n".join(lines) + "\n"
    Path(args.out + ".md").write_text(md)
    Path(args.out + ".json").write_text(json.dumps({"rows": rows, "errors": errors}, indent=2) + "\n")
    print("\n" + md)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
