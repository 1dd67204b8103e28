#!/usr/bin/env python3
"""`gpuscope bench serve` against servers that never finish answering (no GPU).

Two mock servers on free ports, in this process:
  silent   accepts each connection, reads the request and never answers;
  stalled  answers HTTP 200 with one token event, then sends nothing more.
With short timeouts (--first-byte-timeout 2s, --stall-timeout 2s, --progress 1s) bench serve
must fail each request within a few seconds (not the 600 s of --timeout), say why as it
happens ("request 0 failed: connection: timed out: no response within 2 s ... (--first-byte-
timeout)"), print its progress line (done, failed, in flight) while it waits, and exit 1 (no
request completed). A run against the stalled server with a stall timeout longer than the run
(--stall-timeout 60s --timeout 3s) ends on --timeout instead: the rule fires only where it must.

Usage: test_serve_timeouts.py BUILD_DIR
"""

import os
import re
import socket
import subprocess
import sys
import threading
import time

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def serve(kind):
    """Starts a server of `kind` on a free port in daemon threads; returns the port."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []  # keeps every connection open until the process exits

    def handle(conn):
        held.append(conn)
        data = b""
        while b"\r\n\r\n" not in data:  # the request's headers (its body may follow: not needed)
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        if kind == "stalled":
            event = b'data: {"choices": [{"text": " hi"}]}\n\n'
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
                         b"%x\r\n" % len(event) + event + b"\r\n")
        # then nothing, ever

    def accept():
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1]


def bench(gpuscope, port, *extra):
    args = [gpuscope, "bench", "serve", "--url", f"http://127.0.0.1:{port}", "--num-requests", "2",
            "--concurrency", "2", "--warmup", "0", *extra]
    t0 = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return p, time.monotonic() - t0


def main():
    build = os.path.abspath(sys.argv[1])
    gpuscope = os.path.join(build, "bin", "gpuscope")
    silent, stalled = serve("silent"), serve("stalled")

    p, took = bench(gpuscope, silent, "--first-byte-timeout", "2s", "--stall-timeout", "2s", "--progress", "1s")
    err = p.stderr
    check(p.returncode == 1, f"silent server: exit 1, no request completed ({p.returncode})")
    check(took < 10, f"silent server: both requests failed in {took:.1f} s (--first-byte-timeout 2s), not 600 s")
    live = re.search(r"^gpuscope bench serve: request [01] failed: connection: timed out: no response within 2 s of "
                     r"sending the request \(--first-byte-timeout\) \(after 0 tokens\)$", err, re.M)
    check(live is not None, "silent server: the failure is printed as it happens, saying which timeout fired")
    progress = re.search(r"^gpuscope bench serve: 0/2 requests done, 0 failed, 2 in flight \(\d+ s\)$", err, re.M)
    check(progress is not None, "silent server: a progress line while the requests wait (done, failed, in flight)")
    if live and progress:
        check(progress.start() < live.start(), "silent server: the progress line comes before the failures")
    if FAILS:
        print(err[-3000:])

    p, took = bench(gpuscope, stalled, "--first-byte-timeout", "2s", "--stall-timeout", "2s", "--progress", "0")
    err = p.stderr
    check(p.returncode == 1 and took < 10, f"stalled server: exit 1 within seconds ({p.returncode}, {took:.1f} s)")
    check(re.search(r"request [01] failed: connection: timed out: the response stalled, nothing for 2 s "
                    r"\(--stall-timeout\) \(after 1 tokens\)", err) is not None,
          "stalled server: the stall timeout fires after the first token, and says so")
    check("requests done" not in err, "--progress 0: no progress line")

    # Must not fire: a stall timeout longer than the run; --timeout ends it, with libcurl's words.
    p, took = bench(gpuscope, stalled, "--stall-timeout", "60s", "--timeout", "3s", "--progress", "0")
    err = p.stderr
    check(p.returncode == 1 and took < 15, f"--timeout 3s ends the stalled requests ({p.returncode}, {took:.1f} s)")
    check("--stall-timeout" not in err and "--first-byte-timeout" not in err and "Timeout was reached" in err,
          "a stall shorter than --stall-timeout is not called a stall")
    if FAILS:
        print(err[-3000:])

    print(f"{'ok  ' if not FAILS else 'FAIL'} bench serve timeouts: {len(FAILS)} failure(s)")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
