#!/usr/bin/env python3
"""Writes the synthetic bench result files under tests/data/ that the unit tests read:
bench-copy-sweep.json (a copy sweep, 2 variants x 7 sizes, as `gpuscope bench copy` on an
H100 would write it against tests/data/profile-test.json) and bench-copy-new.json (the same
run with known changes, for `bench compare`). Times are a launch cost + bytes / bandwidth
model, not measurements. Run from the repository root; the files are committed."""
import copy
import json

CEILING = 3.01e12  # dram_copy of tests/data/profile-test.json
DEVICE = json.load(open("tests/data/profile-test.json"))["device"]


def case(variant, n, overhead_s, bw, rel_stderr=0.002):
    nbytes = 4.0 * n
    t = overhead_s + 2 * nbytes / bw
    bandwidth = 2 * nbytes / t
    return {
        "op": "copy", "variant": variant, "dtype": "f32", "params": f"n={n}", "size": float(n),
        "work": {"bytes_read": nbytes, "bytes_written": nbytes, "flops": 0.0, "compute_ceiling": "fp32_fma"},
        "timing": {"mode": "cold", "batch": 1, "samples": 200, "min_s": t * 0.99, "median_s": t,
                   "mean_s": t * 1.002, "stddev_s": t * 0.01, "rel_stderr": rel_stderr, "stop": "converged",
                   "sm_clock_mhz_before": 1980.0, "sm_clock_mhz_after": 1980.0, "throttled_samples": 0},
        "derived": {"bandwidth": bandwidth, "flop_rate": 0.0, "intensity": 0.0,
                    "bound": "latency" if bandwidth < 0.1 * CEILING else "memory", "ceiling": "dram_copy",
                    "ceiling_value": CEILING, "pct_of_ceiling": bandwidth / CEILING * 100, "ceiling_source": "measured"},
        "verified": True, "max_abs_error": 0.0, "note": "",
    }


def run(cases):
    return {"format_version": 1, "gpuscope_version": "0.1.0", "measured_at": "2026-11-23T12:00:00Z",
            "device": DEVICE, "profile_path": "tests/data/profile-test.json", "cases": cases, "warnings": []}


sizes = [2 ** k for k in range(16, 29, 2)]
base = [case("grid_stride_vec4", n, 4e-6, 2.90e12) for n in sizes] + [case("memcpy", n, 5e-6, 2.80e12) for n in sizes]
json.dump(run(base), open("tests/data/bench-copy-sweep.json", "w"), indent=2)

new = copy.deepcopy(base)
for c in new:
    if c["variant"] == "grid_stride_vec4" and c["params"] == "n=268435456":
        c["timing"]["median_s"] /= 1.10  # faster by 10 %
    if c["variant"] == "memcpy" and c["params"] == "n=268435456":
        c["timing"]["median_s"] *= 1.10  # slower by 10 %
    if c["variant"] == "memcpy" and c["params"] == "n=65536":
        c["timing"]["median_s"] *= 1.003  # within noise: same
new = [c for c in new if not (c["variant"] == "memcpy" and c["params"] == "n=1048576")]  # only in base
extra = case("grid_stride_vec4", 2 ** 30, 4e-6, 2.90e12)  # only in new
new.append(extra)
json.dump(run(new), open("tests/data/bench-copy-new.json", "w"), indent=2)
