#!/usr/bin/env python3
"""Compares what `gpuscope bench serve` measured with the server's own log.

  compare_serve.py --server-log LOG.jsonl --json RESULT.json [--requests REQUESTS.jsonl]
                   [--skip N] [--tolerance-ms 1]

LOG.jsonl: one line per request as tests/serve/mock_server.py writes it (any server that
logs {"arrived": t, "tokens": [t, ...], "outcome": "ok"} in seconds of CLOCK_MONOTONIC
will do; "accepted" or "received" stand in for "arrived" in older logs). The server's TTFT
of a request is tokens[0] - arrived, its TPOT (tokens[-1] - tokens[0]) / (len(tokens) - 1).

RESULT.json is gpuscope's bench result (`bench serve --json`): the mean and the median of
its "ttft" and "tpot" cases are compared with those of the server's requests (--skip N
leaves out the first N requests the server received: the warm-up requests).

With --requests (gpuscope's `--requests-log`), each request is matched with the server's
line by its X-Request-Id, and the per-request differences are printed (mean and largest,
in ms), with where TTFT's difference comes from: start -> the request's arrival at the
server (the client's sending, plus the handshake of a new connection) and the server's
write -> the client's read of the first token (the delivery). Warm-up requests are left
out. The verdict then uses the largest per-request difference.

It prints every difference in ms and exits 1 if the verdict's difference is larger than
--tolerance-ms (the issue's target is 1 ms; a loaded CI machine needs more).
"""

import argparse
import json
import statistics
import sys


def arrived(r):
    return r.get("arrived", r.get("accepted", r.get("received")))


def server_ttft(r):
    return r["tokens"][0] - arrived(r)


def server_tpot(r):
    return (r["tokens"][-1] - r["tokens"][0]) / (len(r["tokens"]) - 1) if len(r["tokens"]) > 1 else None


def per_request(records, requests_path):
    """Per-request differences (client - server) in ms, keyed by metric."""
    by_id = {r.get("request_id"): r for r in records if r.get("request_id")}
    diffs = {"ttft": [], "tpot": [], "send": [], "delivery": []}
    matched = 0
    with open(requests_path) as f:
        for line in f:
            if not line.strip():
                continue
            q = json.loads(line)
            r = by_id.get(q["id"])
            if q["warmup"] or q["error"] or r is None or len(q["token_ns"]) != len(r["tokens"]):
                continue
            matched += 1
            mono = lambda ns: (ns - q["realtime_minus_monotonic_ns"]) / 1e9  # noqa: E731
            start, tokens = mono(q["start_ns"]), [mono(t) for t in q["token_ns"]]
            diffs["ttft"].append(((tokens[0] - start) - server_ttft(r)) * 1e3)
            if len(tokens) > 1:
                diffs["tpot"].append(((tokens[-1] - tokens[0]) / (len(tokens) - 1) - server_tpot(r)) * 1e3)
            diffs["send"].append((arrived(r) - start) * 1e3)
            diffs["delivery"].append((tokens[0] - r["tokens"][0]) * 1e3)
    return matched, diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server-log", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--requests", help="gpuscope bench serve --requests-log FILE: compare request by request")
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--tolerance-ms", type=float, default=1.0)
    a = ap.parse_args()

    with open(a.server_log) as f:
        all_records = [json.loads(line) for line in f if line.strip()]
    all_records.sort(key=arrived)
    records = [r for r in all_records[a.skip:] if r.get("outcome") == "ok" and r["tokens"]]
    if not records:
        print("compare_serve: no successful requests in the server log", file=sys.stderr)
        return 2
    server = {
        "ttft": [server_ttft(r) for r in records],
        "tpot": [t for t in (server_tpot(r) for r in records) if t is not None],
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

    if a.requests:
        matched, diffs = per_request(records, a.requests)
        if matched == 0:
            print("compare_serve: no request of --requests matches the server log by X-Request-Id", file=sys.stderr)
            return 2
        print(f"per request (gpuscope - server, ms; {matched} requests matched by X-Request-Id):")
        print(f"{'metric':<9} {'mean':>8} {'min':>8} {'max':>8}")
        for metric, values in diffs.items():
            if values:
                print(f"{metric:<9} {statistics.mean(values):>+8.3f} {min(values):>+8.3f} {max(values):>+8.3f}")
        worst = max(abs(v) for metric in ("ttft", "tpot") for v in diffs[metric])
        print("(send: start -> arrival at the server; delivery: the server's write -> gpuscope's read of token 1)")
    verdict = "within" if worst <= a.tolerance_ms else "NOT within"
    print(f"largest difference {worst:.3f} ms: {verdict} the tolerance of {a.tolerance_ms} ms")
    return 0 if worst <= a.tolerance_ms else 1


if __name__ == "__main__":
    sys.exit(main())
