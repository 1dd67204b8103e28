#!/usr/bin/env python3
"""The `replay_modes` step of scripts/gpu-run: what each CUPTI replay mode of a one-pass
`gpuscope kernels` run adds to what it counts, and what it costs (an experiment for issue 16's
speed target: kernel replay costs about 25 ms per launch on H100 even for one pass, while
--replay-mode none's user replay is cheap but adds range triggers inside each kernel).

Modes, each on the same program, one process each, alternating, --rounds rounds:
  kernel        gpuscope kernels --metrics M            (CUPTI_KernelReplay, the default)
  user          ... --replay-mode none                   (CUPTI_UserReplay, one pass)
  application   ... --replay-mode none with GPUSCOPE_RANGE_REPLAY=application
                                                         (CUPTI_ApplicationReplay, one pass)
  userrange     ... --replay-mode none with GPUSCOPE_RANGE_REPLAY=userrange
                                                         (CUPTI_UserReplay, one pass, CUPTI_UserRange:
                                                          a range pushed before each launch, popped after)
M = smsp__inst_executed.sum, smsp__warps_launched.sum, gpu__time_duration.sum and
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum (one pass on GH100).
  1. counts on `kernel_mix --only own` (8 launches): per launch, each mode's instructions per
     warp, duration and global store requests minus kernel replay's (medians over rounds);
  2. cost on `kernel_mix --launches 200` (every launch profiled): wall time per mode, and
     untraced, medians over rounds; per launch = (T(mode) - T(untraced)) / 200.
A mode that adds no instruction per warp and costs a fraction of kernel replay per launch would
be a route to exact one-pass counts without kernel replay. Writes OUT/replay_modes.md and
OUT/replay_modes.json; logs in OUT/replay_modes_work/. Exit 0 when every run succeeded (the
figures are the result; there is no target), 1 otherwise.
Usage: replay_modes_check.py --build BUILD --out OUT [--rounds N] [--timeout S]
The arithmetic (compare_modes) is unit-tested by tests/unit/validation/test_replay_modes_check.py.
"""
import argparse
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ next to the validation scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels_check as kc  # noqa: E402  (gs_launches, combine_rounds, match_launches)

INST, WARPS = "smsp__inst_executed.sum", "smsp__warps_launched.sum"
TIME, STORES = "gpu__time_duration.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
METRICS = [INST, WARPS, TIME, STORES]
MODES = {"kernel": ([], {}), "user": (["--replay-mode", "none"], {}),
         "application": (["--replay-mode", "none"], {"GPUSCOPE_RANGE_REPLAY": "application"}),
         "userrange": (["--replay-mode", "none"], {"GPUSCOPE_RANGE_REPLAY": "userrange"})}
SPEED_LAUNCHES = 200


def compare_modes(by_mode):
    """by_mode: {mode: [launch lists of each round]} ({'name', 'metrics'} as kernels_check's).
    Returns rows [{'launch', 'warps', 'mode', 'inst_per_warp_added', 'duration_added_ns',
    'store_requests_added'}] for every mode but 'kernel' against kernel replay (medians over
    rounds, launches matched by name and order; None where a value is missing)."""
    base = kc.combine_rounds([r for r in by_mode.get("kernel", []) if r])
    rows = []
    for mode, rounds in by_mode.items():
        if mode == "kernel":
            continue
        pairs, _, _ = kc.match_launches(kc.combine_rounds([r for r in rounds if r]), base)
        for label, m, k in pairs:
            a, b = m["metrics"], k["metrics"]
            warps = b.get(WARPS)

            def added(metric):
                return None if a.get(metric) is None or b.get(metric) is None else a[metric] - b[metric]
            inst = added(INST)
            rows.append({"launch": label, "warps": warps, "mode": mode,
                         "inst_per_warp_added": inst / warps if inst is not None and warps else None,
                         "duration_added_ns": added(TIME), "store_requests_added": added(STORES)})
    return rows


def per_launch_cost(walls, untraced, launches):
    """{mode: [wall s]} and untraced [wall s] -> {mode: (median wall s, per-launch s or None)}."""
    base = statistics.median(untraced) if untraced else None
    out = {}
    for mode, ws in walls.items():
        med = statistics.median(ws) if ws else None
        out[mode] = (med, (med - base) / launches if med is not None and base is not None else None)
    return out


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def run(cmd, timeout, log, env=None):
    """kernels_check.run (its log written to log, env added) as (rc, stderr, wall s)."""
    r = kc.run(cmd, timeout, log, env)
    return r["rc"], r["stderr"] or "", r["wall_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=150)
    a = ap.parse_args()
    gs = os.path.join(a.build, "bin", "gpuscope")
    km = os.path.join(a.build, "bin", "kernel_mix")
    work = os.path.join(a.out, "replay_modes_work")
    os.makedirs(work, exist_ok=True)
    ok, notes = True, []
    by_mode = {m: [] for m in MODES}
    walls, untraced = {m: [] for m in MODES}, []
    for rnd in range(a.rounds):
        for mode, (flags, env) in MODES.items():
            stem = os.path.join(work, f"counts-{mode}-r{rnd}")
            rc, err, _ = run([gs, "kernels", "--metrics", ",".join(METRICS), *flags, "-o", stem, "-f", "--",
                              km, "--only", "own"], a.timeout, stem + ".log", env)
            if rc != 0 or not os.path.exists(stem + ".sqlite"):
                ok = False
                notes.append(f"counts, {mode}, round {rnd + 1}: exit {rc}: {err[-300:]!r}")
                by_mode[mode].append([])
            else:
                by_mode[mode].append(kc.gs_launches(stem + ".sqlite"))
        rc, err, wall = run([km, "--launches", str(SPEED_LAUNCHES)], a.timeout,
                            os.path.join(work, f"speed-untraced-r{rnd}.log"))
        if rc == 0:
            untraced.append(wall)
        else:
            ok = False
            notes.append(f"speed, untraced, round {rnd + 1}: exit {rc}")
        for mode, (flags, env) in MODES.items():
            stem = os.path.join(work, f"speed-{mode}-r{rnd}")
            rc, err, wall = run([gs, "kernels", "--set", "quick", *flags, "-o", stem, "-f", "--", km, "--launches",
                                 str(SPEED_LAUNCHES)], a.timeout, stem + ".log", env)
            if rc == 0:
                walls[mode].append(wall)
            else:
                ok = False
                notes.append(f"speed, {mode}, round {rnd + 1}: exit {rc}: {err[-300:]!r}")

    rows = compare_modes(by_mode)
    cost = per_launch_cost(walls, untraced, SPEED_LAUNCHES)
    lines = ["# One-pass replay modes of gpuscope kernels: what each adds to the counts and what it costs", "",
             f"{a.rounds} round(s), medians. Counts: `kernel_mix --only own`, metrics {', '.join(METRICS)}; each "
             "mode minus CUPTI kernel replay, launch by launch.", "",
             "| launch | warps | mode | instructions per warp added | duration added (ns) "
             "| global store requests added |",
             "|---|---:|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['launch']} | {fmt(r['warps'], ',.0f')} | {r['mode']} | "
                     f"{fmt(r['inst_per_warp_added'], '+.2f')} | {fmt(r['duration_added_ns'], '+,.0f')} | "
                     f"{fmt(r['store_requests_added'], '+,.0f')} |")
    lines += ["", f"Cost: `kernel_mix --launches {SPEED_LAUNCHES}`, `--set quick`, every launch profiled; untraced "
              f"{fmt(statistics.median(untraced) if untraced else None, '.2f')} s.", "",
              "| mode | wall (median) | per profiled launch |", "|---|---:|---:|"]
    for mode, (med, per) in cost.items():
        lines.append(f"| {mode} | {fmt(med, '.2f')} s | {fmt(None if per is None else per * 1e3, '.2f')} ms |")
    lines += [""] + [f"- FAIL: {n}" for n in notes] + ["", f"Result: {'all runs succeeded' if ok else 'FAIL'}"]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "replay_modes.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "replay_modes.json"), "w") as f:
        json.dump({"rows": rows, "cost": {m: {"median_wall_s": c[0], "per_launch_s": c[1]} for m, c in cost.items()},
                   "untraced_walls_s": untraced, "walls_s": walls, "notes": notes}, f, indent=1)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
