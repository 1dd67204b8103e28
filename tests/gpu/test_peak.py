#!/usr/bin/env python3
"""GPU test: gpuscope peak measures every ceiling, checks every result, and lands near theory.

Pass when: a full `gpuscope peak --json --svg` exits 0 in under 60 s and saves its profile to
the cache; every catalog ceiling (from `gpuscope peak --methods`) is in the profile with a
finite positive value and verified: true — except p2p with a single GPU, which must then be
named in a warning; every ceiling with a theoretical value is within 50-105 % of it; the
SVG draws the DRAM slope; and `gpuscope peak --quick` exits 0 in under 15 s with exactly
the catalog's quick ceilings, all verified. Both runs pass --reference none: the time
targets are the measurement's own (scripts/gpu-run's peak step runs the PyTorch references).
"""
import json
import math
import re
import time

import gputest as g

BAND = (50.0, 105.0)  # % of the theoretical value at the observed clock


def catalog(gs):
    r = g.run([gs, "peak", "--methods"], timeout=30)
    names = re.findall(r"^### `(\w+)`", r.stdout, re.M)
    quick = set(re.findall(r"^\| `(\w+)` \| \w+ \| [^|]+ \| yes \|$", r.stdout, re.M))
    return names, quick


def timed_peak(gs, args, env):
    t0 = time.monotonic()
    r = g.run([gs, "peak", *args], timeout=120, env=env)
    return r, time.monotonic() - t0


def check_profile(c, profile, expected, label):
    by_name = {x["name"]: x for x in profile["ceilings"]}
    for name in expected:
        x = by_name.get(name)
        if x is None:
            if name == "p2p":
                c.check(any("p2p" in w for w in profile["warnings"]), f"{label}: p2p missing, and a warning says why")
            else:
                c.check(False, f"{label}: {name} measured", "missing from the profile")
            continue
        m = x["measured"]
        c.check(m is not None and math.isfinite(m) and m > 0, f"{label}: {name} has a positive value", f"{m}")
        c.check(x["verified"] is True, f"{label}: {name} verified", x["method"][-160:])
        if x.get("theoretical"):
            pct = 100.0 * m / x["theoretical"]
            c.check(BAND[0] <= pct <= BAND[1], f"{label}: {name} within {BAND[0]:.0f}-{BAND[1]:.0f} % of theoretical",
                    f"{pct:.1f} % ({m:.4g} of {x['theoretical']:.4g} {x['unit']})")
    extra = set(by_name) - set(expected)
    c.check(not extra, f"{label}: nothing outside the expected ceilings", f"{sorted(extra)}")


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("gpuscope peak")
    gs = g.gpuscope_bin(args.build)
    names, quick = catalog(gs)
    c.require(len(names) >= 20 and quick, "catalog read from --methods", f"{len(names)} ceilings, quick {sorted(quick)}")

    cache = args.scratch / "cache"
    env = {"GPUSCOPE_CACHE_DIR": str(cache)}
    out_json, out_svg = args.scratch / "profile.json", args.scratch / "roofline.svg"
    r, wall = timed_peak(gs, ["--device", "0", "--reference", "none", "--json", out_json, "--svg", out_svg, "-f"], env)
    c.require(r.returncode == 0, "full run exits 0", f"exit {r.returncode}")
    c.check(wall < 60, "full run under 60 s", f"{wall:.1f} s")
    profile = json.loads(out_json.read_text())
    check_profile(c, profile, names, "full")
    saved = list(cache.glob("*.json"))
    c.check(len(saved) == 1 and saved[0].name == profile["device"]["uuid"] + ".json", "profile saved to the cache",
            f"{saved}")
    c.check(str(saved[0]) in r.stderr if saved else False, "the saved path is printed")
    c.check("ceiling-dram_copy" in out_svg.read_text(), "roofline SVG draws the DRAM copy slope")
    c.check(r.stderr.count("gpuscope peak: [") == len(names), "one progress line per ceiling on stderr")

    quick_json = args.scratch / "quick.json"
    r, wall = timed_peak(gs, ["--quick", "--reference", "none", "--no-save", "--json", quick_json, "-f"], env)
    c.require(r.returncode == 0, "--quick exits 0", f"exit {r.returncode}")
    c.check(wall < 15, "--quick under 15 s", f"{wall:.1f} s")
    qp = json.loads(quick_json.read_text())
    c.check(qp["quick"] is True, "--quick profile says quick")
    check_profile(c, qp, [n for n in names if n in quick], "quick")
    c.finish()


if __name__ == "__main__":
    main()
