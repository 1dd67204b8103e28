#!/usr/bin/env python3
"""GPU test: bench serve's requests in the trace of a server under gpuscope launch --session.

Runs tests/serve/mock_server.py --gpu-work (a synchronized matrix product on the GPU before
each token) under `gpuscope launch --session NAME`, opens a window with `gpuscope start`, sends
1 warm-up and 8 measured requests of 5 tokens, 2 at a time, with `gpuscope bench serve
--session NAME`, closes the window with `gpuscope stop` (NAME.w1.sqlite), then sends one more
request (no --session) after which the server exits (its 10th response; the trace written at
exit). Pass when, in both traces: the
requests table holds the 9 requests with the ids the server logged; each measured request
has at least 5 kernels inside its span (one product per token); its TTFT agrees with the
server's log within 2 ms; and the Perfetto export has the requests track.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import gputest as g

SERVER = Path(__file__).resolve().parents[1] / "serve" / "mock_server.py"


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    g.require_torch()
    c = g.Checks("bench serve --session: requests in the server's trace")
    gs = str(g.gpuscope_bin(args.build))
    name = f"gputest-serve-{os.getpid()}"
    out = args.scratch / "serve"
    port_file, log = args.scratch / "port", args.scratch / "server.jsonl"
    for f in [port_file, log, *args.scratch.glob("serve*.sqlite")]:
        f.unlink(missing_ok=True)
    env = dict(os.environ, GPUSCOPE_SESSIONS_DIR=str(args.scratch / "sessions"))
    launcher = subprocess.Popen(
        [gs, "launch", "--session", name, "-o", str(out), "--force-overwrite", "--", sys.executable, str(SERVER),
         "--port-file", str(port_file), "--log", str(log), "--ttft-ms", "30", "--tpot-ms", "10", "--gpu-work",
         "--max-requests", "10"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def cli(*argv):
        r = subprocess.run([gs, *argv], env=env, capture_output=True, text=True, timeout=180)
        print(f"$ gpuscope {' '.join(argv)}  -> exit {r.returncode}\n{g.indent((r.stdout + r.stderr).strip()[-2000:])}")
        return r

    deadline = time.time() + 120
    while time.time() < deadline and not port_file.exists() and launcher.poll() is None:
        time.sleep(0.2)
    c.require(port_file.exists(), "the server under gpuscope launch is listening",
              launcher.stderr.read()[-2000:] if launcher.poll() is not None else "no port file in 120 s")
    r = cli("start", name)
    c.require(r.returncode == 0, "gpuscope start opens window 1")
    url = f"http://127.0.0.1:{port_file.read_text().strip()}"
    r = cli("bench", "serve", "--url", url, "--session", name, "--num-requests", "8", "--concurrency", "2",
            "--warmup", "1", "--input-len", "8", "--output-len", "5", "--json", str(args.scratch / "serve.json"),
            "--force-overwrite")
    c.require(r.returncode == 0 and "requests-" in r.stderr, "bench serve --session runs and writes its requests")
    r = cli("stop", name)
    c.check(r.returncode == 0 and "serve.w1.sqlite" in r.stderr, "gpuscope stop writes serve.w1.sqlite")
    r = cli("bench", "serve", "--url", url, "--num-requests", "1", "--warmup", "0", "--output-len", "2")
    c.check(r.returncode == 0, "one more request (the server's 10th, outside the window)")
    stdout, stderr = launcher.communicate(timeout=180)
    print(g.indent(g.tail(stderr, 15)))
    c.check(launcher.returncode == 0, "the server exits after its 10th response and gpuscope launch exits 0",
            f"exit {launcher.returncode}")

    server = {}
    for line in log.read_text().splitlines():
        rec = json.loads(line)
        server[rec["request_id"]] = rec
    for label, path in (("w1", args.scratch / "serve.w1.sqlite"), ("final", args.scratch / "serve.sqlite")):
        if not c.check(path.exists(), f"{label}: {path.name} written"):
            continue
        con = g.open_db(path)
        rows = g.show(con, f"{label} requests", "SELECT request, warmup, start_ns, first_token_ns, end_ns, "
                      "output_tokens, error FROM requests ORDER BY start_ns")
        c.equal(f"{label}: requests", 9, len(rows))
        c.check(all(r["request"] in server for r in rows), f"{label}: every request's id is one the server logged")
        measured = [r for r in rows if not r["warmup"]]
        c.check(all(r["error"] is None and r["output_tokens"] == 5 for r in measured),
                f"{label}: 8 measured requests of 5 tokens, no error")
        inside = [g.scalar(con, "SELECT COUNT(*) FROM kernels WHERE start_ns >= ? AND end_ns <= ?",
                           (r["start_ns"], r["end_ns"])) for r in measured]
        print(f"  {label}: kernels inside each request's span: {inside}")
        c.check(all(n >= 5 for n in inside), f"{label}: at least 5 kernels inside each request's span")
        offset = None
        diffs = []
        for r in measured:
            s = server.get(r["request"])
            if not s or not s["tokens"]:
                continue
            # Client: CLOCK_REALTIME ns; server: CLOCK_MONOTONIC s. TTFT is a difference on each side.
            diffs.append((r["first_token_ns"] - r["start_ns"]) / 1e6 - (s["tokens"][0] - s["arrived"]) * 1e3)
        print(f"  {label}: TTFT gpuscope - server log per request (ms): {[round(d, 3) for d in diffs]}")
        c.check(len(diffs) == 8 and all(abs(d) < 2.0 for d in diffs), f"{label}: TTFT within 2 ms of the server's log")
        if label == "final":
            pj = args.scratch / "serve.perfetto.json"
            r = cli("export", str(path), "-o", str(pj), "--force-overwrite")
            text = pj.read_text() if pj.exists() else ""
            c.check(r.returncode == 0 and "requests (gpuscope bench serve)" in text,
                    "the Perfetto export has the requests track")
    c.finish()


if __name__ == "__main__":
    main()
