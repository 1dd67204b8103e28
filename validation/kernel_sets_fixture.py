#!/usr/bin/env python3
"""Builds tests/data/kernel-sets-h100.json (the counters test_kernel_sets_recorded reads) from
one round of validation/kernel_sets_check.py's work folder: gpuscope's database of
`gpuscope kernels --set detailed` on kernel_mix (launch facts from kernel_profiles, values
from v_kernel_metrics) and ncu's CSV of the same metrics on the same launches (the
`.ncu.log` beside it), matched by base name and order (kernels_check.match_launches).

Usage: kernel_sets_fixture.py WORK_STEM OUT.json --what "TEXT"
  WORK_STEM  e.g. OUT/kernel_sets-fixture/kernel_mix-detailed-r0 (STEM.sqlite, STEM.ncu.log)
  --what     the provenance sentence stored in the file (device, driver, date, command)
Exit 0 when every gpuscope launch has its ncu twin, 1 otherwise (nothing written), 2 on usage.
"""
import argparse
import json
import os
import sqlite3
import sys

sys.dont_write_bytecode = True  # no __pycache__ next to the validation scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels_check as kc  # noqa: E402  (gs_launches, run_log_stdout, parse_ncu_csv, match_launches)


def launch_facts(db):
    """{profile id: facts} from kernel_profiles (grid, block, registers, shared memory, passes)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT id, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, "
                           "static_shared_memory, dynamic_shared_memory, passes FROM kernel_profiles").fetchall()
    finally:
        con.close()
    return {r[0]: {"grid": list(r[1:4]), "block": list(r[4:7]), "registers_per_thread": r[7],
                   "static_shared_memory": r[8], "dynamic_shared_memory": r[9], "passes": r[10]} for r in rows}


def build(stem, what, chip="GH100", metric_set="detailed"):
    """Returns (document, problems): the fixture from STEM.sqlite and STEM.ncu.log."""
    gs = kc.gs_launches(stem + ".sqlite")
    facts = launch_facts(stem + ".sqlite")
    ncu = kc.parse_ncu_csv(kc.run_log_stdout(stem + ".ncu.log"))
    pairs, only_gs, only_ncu = kc.match_launches(gs, ncu)
    problems = [f"only in gpuscope: {only_gs}"] if only_gs else []
    problems += [f"only in ncu: {only_ncu}"] if only_ncu else []
    launches = []
    for _, g, n in pairs:
        launches.append({"name": g["name"], "launch_index": g["launch_index"], **facts[g["id"]],
                         "metrics": dict(sorted(g["metrics"].items())),
                         "ncu": dict(sorted((k, v) for k, v in n["metrics"].items() if v is not None))})
    if not launches:
        problems.append("no launch matched")
    return {"what": what, "chip": chip, "set": metric_set, "launches": launches}, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stem")
    ap.add_argument("out")
    ap.add_argument("--what", required=True)
    a = ap.parse_args()
    doc, problems = build(a.stem, a.what)
    if problems:
        print("kernel_sets_fixture: " + "; ".join(problems), file=sys.stderr)
        return 1
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"kernel_sets_fixture: wrote {a.out} ({len(doc['launches'])} launches)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
