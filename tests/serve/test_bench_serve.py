#!/usr/bin/env python3
"""End to end: `gpuscope bench serve` against tests/serve/mock_server.py (no GPU).

  test_bench_serve.py BUILD_DIR [--tolerance-ms MS]   (CTest: 500, see tests/serve/CMakeLists.txt)

Runs the mock server on a free port and checks that
  - 8 normal requests (of 12, 4 at a time) complete, and TTFT / TPOT agree with the
    server's log within the tolerance, on average and request by request (compare_serve.py
    prints every difference); --requests-log writes each request's span, with the
    X-Request-Id the server logged; requests reuse kept-alive connections;
  - HTTP 500, a connection closed mid-stream, a malformed event and an error event each
    give their request a clear error while the other requests are kept and counted;
  - --session NAME writes the requests into that launch session's log folder,
    `gpuscope import` of the folder gives the trace's requests table, one exact row each,
    and `gpuscope export` draws them on a "requests" track;
  - chat completions with Poisson arrivals work; `bench compare` reads two runs;
  - a run whose requests all fail, and a server that is not there, exit 1 saying why.
The tolerance in CTest only catches a wrong clock or unit (a loaded CI machine); the target on the GPU
machine is 1 ms: `test_bench_serve.py BUILD --tolerance-ms 1`.
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def gpuscope(build, *args, env=None):
    p = subprocess.run([os.path.join(build, "bin", "gpuscope"), "bench", "serve", *args], capture_output=True,
                       text=True, timeout=120, env=env)
    return p.returncode, p.stdout, p.stderr


def check_session(build, url, tmp):
    """bench serve --session NAME: the requests land in the session's log folder; importing
    the folder gives the requests table. The session folder is made by hand here, as
    `gpuscope launch --session` makes it (cli/session_info.hpp: NAME/info; folders 0700)."""
    sessions = os.path.join(tmp, "sessions")
    logs = os.path.join(tmp, "srv.logs")
    os.mkdir(sessions, 0o700)
    os.mkdir(os.path.join(sessions, "srv"), 0o700)
    os.makedirs(logs)
    with open(os.path.join(sessions, "srv", "info"), "w") as f:
        f.write(f"name=srv\nlauncher_pid={os.getpid()}\noutput={tmp}/srv.sqlite\nlog_dir={logs}\ncommand=mock\n")
    env = dict(os.environ, GPUSCOPE_SESSIONS_DIR=sessions)
    rc, _, stderr = gpuscope(build, "--url", url, "--input-len", "4", "--output-len", "3", "--num-requests", "3",
                             "--warmup", "1", "--session", "srv", env=env)
    files = [f for f in os.listdir(logs) if f.startswith("requests-") and f.endswith(".jsonl")]
    check(rc == 0 and len(files) == 1, f"--session writes one requests-PID.jsonl into the log folder ({rc}: {stderr})")
    if not files:
        return
    spans = [json.loads(line) for line in open(os.path.join(logs, files[0]))]
    rc2, _, stderr2 = gpuscope(build, "--url", url, "--num-requests", "1", "--session", "nosuch", env=env)
    check(rc2 == 2 and "no session 'nosuch'" in stderr2, f"--session of no session: exit 2 ({rc2}: {stderr2})")
    # The server's event log: a recorded one (tests/data/cnn.logs), as a traced server leaves it.
    shutil.copy(os.path.join(HERE, "..", "data", "cnn.logs", "vm-499.gslog"), logs)
    p = subprocess.run([os.path.join(build, "bin", "gpuscope"), "import", logs, "-o", os.path.join(tmp, "srv")],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"gpuscope import of the log folder ({p.returncode}: {p.stderr})")
    if p.returncode != 0:
        return
    db = sqlite3.connect(os.path.join(tmp, "srv.sqlite"))
    rows = db.execute("SELECT client_pid, request, request_index, warmup, start_ns, first_token_ns, end_ns, "
                      "prompt_tokens, output_tokens, new_connection, error FROM requests ORDER BY id").fetchall()
    expected = [(int(files[0][len("requests-"):-len(".jsonl")]), s["id"], s["index"], int(s["warmup"]), s["start_ns"],
                 s["first_token_ns"], s["end_ns"], s["prompt_tokens"], s["output_tokens"], int(s["new_connection"]),
                 s["error"] or None) for s in spans]
    check(len(rows) == 4 and rows == expected, f"the requests table holds the 4 spans exactly ({rows})")
    # gpuscope export: the requests as a track of the Perfetto timeline.
    out = os.path.join(tmp, "srv.perfetto.json")
    p = subprocess.run([os.path.join(build, "bin", "gpuscope"), "export", os.path.join(tmp, "srv.sqlite"), "-o", out],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"gpuscope export of that trace ({p.returncode}: {p.stderr})")
    if p.returncode == 0:
        events = json.load(open(out))["traceEvents"]
        group = [e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name" and
                 e["args"]["name"] == "requests (gpuscope bench serve)"]
        slices = sorted(e["name"] for e in events if e.get("cat") == "request" and e["ph"] == "X")
        check(len(group) == 1 and slices == sorted(s["id"] for s in spans),
              f"the Perfetto export has the requests track with the 4 requests ({slices})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--tolerance-ms", type=float, default=20.0)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gpuscope-serve-")
    log = os.path.join(tmp, "server.jsonl")
    port_file = os.path.join(tmp, "port")
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "mock_server.py"), "--port-file", port_file, "--log",
                               log, "--ttft-ms", "30", "--tpot-ms", "10"])
    try:
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        port = open(port_file).read().strip()
        url = f"http://127.0.0.1:{port}"

        prompts = os.path.join(tmp, "prompts.jsonl")
        with open(prompts, "w") as f:
            for i in range(8):
                f.write(json.dumps({"prompt": f"normal request {i}", "max_tokens": 10, "prompt_tokens": 3}) + "\n")
            for failure in ("[http500]", "[close]", "[malformed]", "[error]"):
                f.write(json.dumps({"prompt": f"please fail: {failure}", "max_tokens": 10}) + "\n")

        out1 = os.path.join(tmp, "run1.json")
        reqlog = os.path.join(tmp, "requests.jsonl")
        rc, stdout, stderr = gpuscope(a.build, "--url", url, "--prompts", prompts, "--num-requests", "12",
                                      "--concurrency", "4", "--warmup", "2", "--json", out1, "--format", "csv",
                                      "--requests-log", reqlog)
        print(stdout)
        print(stderr)
        check(rc == 0, f"bench serve with 4 failing requests of 12 exits 0 (got {rc})")
        run = json.load(open(out1))
        cases = {c["variant"]: c for c in run["cases"]}
        check(sorted(cases) == sorted(["ttft", "tpot", "itl", "latency", "request_interval", "output_token_interval"]),
              "one case per metric")
        check(cases["ttft"]["timing"]["samples"] == 8, "8 requests completed and counted")
        check(cases["output_token_interval"]["timing"]["samples"] == 80, "80 output tokens counted")
        check(cases["itl"]["timing"]["samples"] == 72, "72 inter-token gaps")
        check(all(c["timing"]["mode"] == "serve" for c in run["cases"]), "mode serve")
        warnings = run["warnings"]
        expected = {
            "request 8: HTTP 500: ": "HTTP 500 is the error of request 8",
            "request 9: connection: ": "the connection closed mid-stream is the error of request 9",
            "request 10: malformed event 2: not JSON ('{this is not json')": "the malformed event of request 10",
            "request 11: server error in event 2: mock: preempted": "the error event of request 11",
        }
        for prefix, what in expected.items():
            check(any(w.startswith(prefix) for w in warnings), what + f" (warnings: {warnings})")
        check(len(warnings) == 4, "no other warnings")
        check("Request throughput" in stdout and "TTFT (time to first token)" in stdout, "the reports are printed")
        for prefix in expected:
            check(f"warning: {prefix}" in stderr, f"stderr names '{prefix}'")

        cmp = subprocess.run([sys.executable, os.path.join(HERE, "compare_serve.py"), "--server-log", log, "--json",
                              out1, "--requests", reqlog, "--skip", "2", "--tolerance-ms", str(a.tolerance_ms)],
                             capture_output=True, text=True)
        print(cmp.stdout + cmp.stderr)
        check(cmp.returncode == 0, f"TTFT and TPOT within {a.tolerance_ms} ms of the server's log, request by request")
        check("8 requests matched by X-Request-Id" in cmp.stdout, "the 8 normal requests matched the server's log")

        # The requests log: one span per request, warm-up included, on CLOCK_REALTIME.
        spans = [json.loads(line) for line in open(reqlog)]
        server_lines = [json.loads(line) for line in open(log)]
        check(len(spans) == 14 and sum(s["warmup"] for s in spans) == 2, "14 spans, 2 of them warm-up")
        check(len({s["id"] for s in spans}) == 14, "each request its own X-Request-Id")
        check({s["id"] for s in spans} == {r["request_id"] for r in server_lines}, "the server logged the same ids")
        now_ns = time.time_ns()
        ok_spans = [s for s in spans if not s["error"]]
        check(len(ok_spans) == 10, f"10 spans without error ({len(ok_spans)})")
        check(all(now_ns - 120e9 < s["start_ns"] < s["first_token_ns"] <= s["end_ns"] < now_ns for s in ok_spans),
              "start < first token <= end, on CLOCK_REALTIME within the last 2 minutes")
        check(all(len(s["token_ns"]) == 10 == s["output_tokens"] and s["token_ns"][0] == s["first_token_ns"] and
                  s["token_ns"] == sorted(s["token_ns"]) for s in ok_spans), "10 ordered token times per span")
        by_id = {r["request_id"]: r for r in server_lines}
        for s in ok_spans:  # one clock on both sides: each token read after the server wrote it, not 1 s later
            r = by_id[s["id"]]
            mono = [(t - s["realtime_minus_monotonic_ns"]) / 1e9 for t in s["token_ns"]]
            gaps = [c - w for c, w in zip(mono, r["tokens"])]
            check(all(0 <= g < 1 for g in gaps), f"{s['id']}: token read - written in [0, 1 s): {min(gaps), max(gaps)}")
        errors = {s["index"]: s["error"] for s in spans if not s["warmup"] and s["error"]}
        check(sorted(errors) == [8, 9, 10, 11] and errors[8].startswith("HTTP 500"), f"the 4 failures ({errors})")
        connections = {r["connection"] for r in server_lines}
        check(len(connections) < len(server_lines), f"kept-alive connections reused: {len(connections)} connections "
              f"for {len(server_lines)} requests")

        check_session(a.build, url, tmp)

        # Chat completions, Poisson arrivals, synthetic prompts.
        out2 = os.path.join(tmp, "run2.json")
        rc, stdout, stderr = gpuscope(a.build, "--url", url, "--endpoint", "chat", "--input-len", "16", "--output-len",
                                      "5", "--num-requests", "10", "--request-rate", "50", "--warmup", "0", "--json",
                                      out2)
        check(rc == 0, f"chat with --request-rate exits 0 (got {rc}: {stderr})")
        run2 = json.load(open(out2))
        c2 = {c["variant"]: c for c in run2["cases"]}
        check(c2["ttft"]["timing"]["samples"] == 10 and c2["output_token_interval"]["timing"]["samples"] == 50,
              "chat: 10 requests of 5 tokens (the role chunk is no token)")
        check("endpoint=chat,concurrency=unbounded,rate=50" in c2["ttft"]["params"], "params name the load")
        check(0.025 < c2["ttft"]["timing"]["median_s"] < 0.2, f"chat TTFT near 30 ms: {c2['ttft']['timing']}")

        # bench compare reads two serve runs.
        out3 = os.path.join(tmp, "run3.json")
        rc, _, _ = gpuscope(a.build, "--url", url, "--endpoint", "chat", "--input-len", "16", "--output-len", "5",
                            "--num-requests", "10", "--request-rate", "50", "--warmup", "0", "--json", out3)
        p = subprocess.run([os.path.join(a.build, "bin", "gpuscope"), "bench", "compare", out2, out3, "--format", "csv"],
                           capture_output=True, text=True)
        print(p.stdout + p.stderr)
        check(p.returncode == 0 and p.stdout.count("serve") >= 6, "bench compare reads two serve runs")

        # All requests fail: exit 1 and why.
        bad = os.path.join(tmp, "bad.jsonl")
        with open(bad, "w") as f:
            f.write(json.dumps({"prompt": "[http500]"}) + "\n")
        rc, _, stderr = gpuscope(a.build, "--url", url, "--prompts", bad, "--num-requests", "3", "--warmup", "0")
        check(rc == 1 and "no request completed (3 failed" in stderr, f"all failed: exit 1 ({rc}: {stderr})")
    finally:
        server.terminate()
        server.wait()

    # Nobody listening.
    rc, _, stderr = gpuscope(a.build, "--url", f"http://127.0.0.1:{port}", "--num-requests", "2", "--warmup", "0")
    check(rc == 1 and "connection: " in stderr, f"no server: exit 1 with the connection error ({rc}: {stderr})")

    # Bad input.
    rc, _, stderr = gpuscope(a.build, "--prompts", os.path.join(tmp, "missing.jsonl"))
    check(rc == 2 and "cannot open the prompts file" in stderr, f"missing prompts file: exit 2 ({rc})")

    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
