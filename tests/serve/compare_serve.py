#!/usr/bin/env python3
"""Compares what `gpuscope bench serve` measured with the server's own schedule.

  compare_serve.py --server-log LOG.jsonl --json RESULT.json [--skip N] [--tolerance-ms 1]

LOG.jsonl: one line per request as tests/serve/mock_server.py writes it (any server that
logs {"received": t, "tokens": [t, ...], "outcome": "ok"} in seconds of one clock will do).
The server's TTFT of a request is tokens[0] - accepted (the connection's accept; received,
when a log has no accepted), its TPOT (tokens[-1] - tokens[0]) /
(len(tokens) - 1). RESULT.json is gpuscope's bench result (`bench serve --json`): its
"ttft" and "tpot" cases. --skip N leaves out the first N requests the server received
(the warm-up requests). The mean and the median of each side are compared; it prints every
difference in ms and exits 1 if one is larger than --tolerance-ms (the issue's target on
the GPU machine is 1 ms; a loaded CI machine needs more).
"""

import argparse
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server-log", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--tolerance-ms", type=float, default=1.0)
    a = ap.parse_args()

    with open(a.server_log) as f:
        records = [json.loads(line) for line in f if line.strip()]
    records.sort(key=lambda r: r.get("accepted", r["received"]))
    records = [r for r in records[a.skip:] if r.get("outcome") == "ok" and r["tokens"]]
    if not records:
        print("compare_serve: no successful requests in the server log", file=sys.stderr)
        return 2
    server = {
        "ttft": [r["tokens"][0] - r.get("accepted", r["received"]) for r in records],
        "tpot": [(r["tokens"][-1] - r["tokens"][0]) / (len(r["tokens"]) - 1) for r in records if len(r["tokens"]) > 1],
    }
    with open(a.json) as f:
        run = json.load(f)
    cases = {c["variant"]: c["timing"] for c in run["cases"] if c["op"] == "serve"}

    worst = 0.0
    print(f"{'metric':<6} {'stat':<6} {'server ms':>10} {'gpuscope ms':>12} {'diff ms':>9}  (requests: {len(records)})")
    for metric, values in server.items():
        timing = cases[metric]
        for stat, ours, theirs in (("mean", statistics.mean(values), timing["mean_s"]),
                                   ("median", statistics.median(values), timing["median_s"])):
            diff = (theirs - ours) * 1e3
            worst = max(worst, abs(diff))
            print(f"{metric:<6} {stat:<6} {ours * 1e3:>10.3f} {theirs * 1e3:>12.3f} {diff:>+9.3f}")
    verdict = "within" if worst <= a.tolerance_ms else "NOT within"
    print(f"largest difference {worst:.3f} ms: {verdict} the tolerance of {a.tolerance_ms} ms")
    return 0 if worst <= a.tolerance_ms else 1


if __name__ == "__main__":
    sys.exit(main())
