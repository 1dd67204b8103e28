#!/usr/bin/env python3
"""A mock OpenAI-compatible streaming server for testing `gpuscope bench serve`.

Serves POST /v1/completions and /v1/chat/completions with "stream": true as vLLM does:
HTTP/1.1, chunked transfer encoding, server-sent events `data: {...}` and `data: [DONE]`.
Each request streams max_tokens tokens on a known schedule: the first token --ttft-ms after
the request arrived, then one every --tpot-ms. With stream_options.include_usage the last
event carries usage.completion_tokens.

The prompt picks a failure, so a test decides which request fails whatever the order:
  "[http500]"    HTTP 500 with a JSON error body, no stream;
  "[close]"      two tokens, then the connection is closed mid-stream (no last chunk);
  "[malformed]"  one token, then an event whose data is not JSON, then the rest;
  "[error]"      one token, then an event {"error": {...}}.

The server's own record goes to --log (JSON lines, one per request), every time in
time.monotonic() seconds (CLOCK_MONOTONIC, the clock of std::chrono::steady_clock):
  "arrived"   when the request's first byte reached this host's TCP stack: the kernel's
              receive timestamp of that byte (SO_TIMESTAMPNS, read with MSG_PEEK before the
              request is parsed), so neither Python's thread wake-up nor the GIL delays it;
              the schedule counts from here;
  "received"  when the request had been read and parsed (the point a real server logs);
  "tokens"    the moment each token event was handed to the socket (read just before the
              write: after it, re-taking the GIL can add milliseconds under concurrency);
  "request_id" the X-Request-Id header ("" when absent), "connection" the serial number of
              the TCP connection (keep-alive: several requests share one).
Connections are kept alive (HTTP/1.1, chunked), as vLLM's server keeps them, except after
"[close]". tests/serve/compare_serve.py compares this log with what `gpuscope bench serve`
measured.

--gpu-work runs a small matrix product on the GPU (PyTorch, synchronized) before each token,
so a server under `gpuscope launch` has kernels inside each request's span (the GPU test
tests/gpu/test_serve_session.py); --max-requests N exits after the N-th response.

--model gpt2-small streams a real model's tokens instead of the schedule (--ttft-ms and
--tpot-ms are then unused): the GPT-2-shaped model of examples/pytorch/llm_generate.py (its
build(): random weights, nothing downloaded; transformers' GPT2LMHeadModel when importable,
else its plain-torch decoder; --impl picks; --layers/--hidden/--heads/--vocab shrink it;
--dtype float16) is built on CUDA once at start, and warmed up by two generations before the
port is announced. Each request is one greedy generation of max_tokens tokens with a KV
cache, one forward per token; each token is on the host (synchronized) before its event is
written, so the log's "tokens" are the real token times. The prompt's token ids come from its
words (one id per whitespace-separated word, crc32 mod the vocabulary: `bench serve`'s
synthetic prompts are one token a word), the oldest cut to fit the context. One GPU: the
generations of concurrent requests take turns on one thread, in the order they came; a
waiting request's TTFT includes its wait. Without torch or CUDA, --model exits 2 saying what is missing.

Usage: mock_server.py [--port 0] [--port-file F] [--log F] [--ttft-ms 30] [--tpot-ms 10]
                      [--gpu-work | --model gpt2-small [--impl auto|hf|plain] [--layers 12]
                       [--hidden 768] [--heads 12] [--vocab 50257] [--dtype float16]]
                      [--max-requests N]
The port it listens on (--port 0: a free one) is printed as "PORT N" and written to --port-file.
"""

import argparse
import concurrent.futures
import json
import os
import socket
import struct
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux


def arrival_time(sock):
    """Blocks until the next request's first byte is there; returns the kernel's receive
    timestamp of it on time.monotonic()'s clock (None: the peer closed the connection).
    Without a timestamp (not Linux) it falls back to the time the byte was seen."""
    data, ancillary, _, _ = sock.recvmsg(1, socket.CMSG_SPACE(16), socket.MSG_PEEK)
    if not data:
        return None
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
            sec, nsec = struct.unpack("qq", payload[:16])
            realtime_minus_monotonic = time.time_ns() - time.monotonic_ns()
            return (sec * 1_000_000_000 + nsec - realtime_minus_monotonic) / 1e9
    return time.monotonic()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gpuscope-mock/1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.serial = self.server.next_connection()

    def handle_one_request(self):
        # The client sends its next request only after the previous response ended (no
        # pipelining), so the socket, not rfile's buffer, holds its first byte.
        try:
            self.arrived = arrival_time(self.connection)
        except OSError:
            self.arrived = None
        if self.arrived is None:
            self.close_connection = True
            return
        super().handle_one_request()

    def log_message(self, fmt, *args):  # quiet: the log file is the record
        pass

    def _chunk(self, data: bytes):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _event(self, obj) -> float:
        """Writes one event; returns when it was handed to the socket."""
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        data = b"data: " + payload.encode() + b"\n\n"
        sent = time.monotonic()
        self._chunk(data)
        return sent

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        received = time.monotonic()
        arrived = self.arrived if self.arrived is not None else received
        chat = self.path.endswith("/chat/completions")
        if not (chat or self.path.endswith("/completions")):
            self.send_error(404)
            return
        prompt = body["messages"][-1]["content"] if chat else body.get("prompt", "")
        tokens = int(body.get("max_tokens", 16))
        usage = bool(body.get("stream_options", {}).get("include_usage"))
        cfg = self.server.cfg
        record = {"prompt": prompt, "request_id": self.headers.get("X-Request-Id", ""), "connection": self.serial,
                  "arrived": arrived, "received": received, "tokens": [], "path": self.path}

        if "[http500]" in prompt:
            err = json.dumps({"error": {"message": "mock: internal error", "code": 500}}).encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(err)))
            self.end_headers()
            self.wfile.write(err)
            record["outcome"] = "http500"
            self.server.write_log(record)
            self.server.served_one()
            return

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if chat:
            self._event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        outcome = "ok"

        def emit(i):
            """Writes token i's event (and a failure the prompt asks for); False: stop."""
            nonlocal outcome
            text = f" tok{i}"
            choice = {"index": 0, "delta": {"content": text}} if chat else {"index": 0, "text": text}
            record["tokens"].append(self._event({"id": "mock", "choices": [choice]}))
            if "[close]" in prompt and i == 1:
                outcome = "close"
                return False
            if "[malformed]" in prompt and i == 0:
                self._event("{this is not json")
            if "[error]" in prompt and i == 0:
                self._event({"error": {"message": "mock: preempted", "code": 503}})
                outcome = "error"
                return False
            return True

        if self.server.model:
            self.server.model.generate(prompt, tokens, emit)
        else:
            for i in range(tokens):
                due = arrived + (cfg.ttft_ms + i * cfg.tpot_ms) / 1e3
                if self.server.gpu_step:
                    self.server.gpu_step()
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                if not emit(i):
                    break
        if outcome == "close":
            self.connection.shutdown(socket.SHUT_RDWR)  # no terminating chunk: a broken transfer
            self.close_connection = True
        else:
            if usage and outcome == "ok":
                self._event({"id": "mock", "choices": [], "usage": {"completion_tokens": len(record["tokens"])}})
            self._event("[DONE]")
            self._chunk(b"")
        record["outcome"] = "malformed" if "[malformed]" in prompt else outcome
        self.server.write_log(record)
        self.server.served_one()


def gpu_step():
    """A function that runs one small matrix product on the GPU and waits for it."""
    import torch  # only with --gpu-work

    a = torch.randn(512, 512, device="cuda")
    lock = threading.Lock()

    def step():
        with lock:
            (a @ a).sum().item()  # .item() synchronizes

    step()  # CUDA context and cuBLAS handle made before the first request
    return step


def prompt_ids(prompt, vocab, limit):
    """The prompt's token ids for --model: one per whitespace-separated word (crc32 of its
    bytes mod vocab; at least one id), the last `limit` of them."""
    words = prompt.split() or [""]
    return [zlib.crc32(w.encode()) % vocab for w in words][-max(limit, 1):]


class ModelUnavailable(Exception):
    """--model cannot run here: the message says what is missing."""


class ModelRunner:
    """--model: a GPT-2-shaped model on CUDA (examples/pytorch/llm_generate.py's build()),
    one greedy generation at a time. generate(prompt, n, emit) calls emit(i) once token i is
    on the host; emit returning False ends the generation."""

    CONTEXT = 1024  # positions of the model (GPT-2's n_positions)

    class _Stop(Exception):
        pass

    def __init__(self, cfg):
        try:
            import torch
        except ImportError as e:
            raise ModelUnavailable(f"PyTorch is not importable here ({e}); install torch with CUDA")
        if not torch.cuda.is_available():
            raise ModelUnavailable("torch.cuda.is_available() is False: --model needs a CUDA GPU")
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                                        "pytorch"))
        import llm_generate  # the builder of the model (after torch: it exits 2 without it)

        self.torch = torch
        self.vocab = cfg.vocab
        build_args = argparse.Namespace(model=cfg.impl, vocab=cfg.vocab, hidden=cfg.hidden, layers=cfg.layers,
                                        heads=cfg.heads, prompt_len=self.CONTEXT // 2, new_tokens=self.CONTEXT // 2,
                                        compile=False)
        torch.manual_seed(0)
        try:
            self.kind, _, self._generate = llm_generate.build(build_args, getattr(torch, cfg.dtype))
        except SystemExit:  # build() exits 2 where --impl hf has no transformers
            raise ModelUnavailable("--impl hf needs transformers, which is not importable here")
        # One thread runs every generation, in the order the requests came (a real server's
        # engine loop): one GPU, and the CUDA state of that thread (cuBLAS handle and
        # workspace) is the one the warm-up made.
        self.worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        for words in (16, 128):  # warm-up: CUDA context, cuBLAS, the allocator, the kernels' first use
            self.generate(" ".join(["the"] * words), 32, lambda i: True)

    def generate(self, prompt, n, emit):
        """Runs on the model's thread; returns when the generation has ended (its exception
        too: a client that went away)."""
        self.worker.submit(self._run, prompt, n, emit).result()

    def _run(self, prompt, n, emit):
        torch = self.torch
        if n <= 0:
            return
        n = min(n, self.CONTEXT - 1)
        ids = prompt_ids(prompt, self.vocab, self.CONTEXT - n)
        runner = self

        class Clock:  # what llm_generate's generate functions call once a token is on the host
            def __init__(self):
                self.i = 0

            def token(self):
                torch.cuda.synchronize()  # the token is already on the host (.cpu()): a no-op wait
                i, self.i = self.i, self.i + 1
                if not emit(i) or self.i >= n:
                    raise runner._Stop()

        with torch.inference_mode():
            try:
                self._generate(torch.tensor([ids], device="cuda"), n, Clock())
            except self._Stop:
                pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default listen backlog is 5: with more clients connecting at once the
    # kernel drops a SYN and the client's retry comes 1 s later, inside that request's TTFT.
    request_queue_size = 128

    def __init__(self, addr, cfg):
        super().__init__(addr, Handler)
        self.cfg = cfg
        self.lock = threading.Lock()
        self.log = open(cfg.log, "a") if cfg.log else None
        self.connections = 0
        self.served = 0
        self.gpu_step = gpu_step() if getattr(cfg, "gpu_work", False) else None
        self.model = ModelRunner(cfg) if getattr(cfg, "model", None) else None

    def served_one(self):
        with self.lock:
            self.served += 1
            last = self.cfg.max_requests and self.served >= self.cfg.max_requests
        if last:  # shutdown() waits for serve_forever: from another thread
            threading.Thread(target=self.shutdown, daemon=True).start()

    def next_connection(self):
        with self.lock:
            self.connections += 1
            return self.connections

    def write_log(self, record):
        if self.log:
            with self.lock:
                self.log.write(json.dumps(record) + "\n")
                self.log.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--ttft-ms", type=float, default=30.0)
    ap.add_argument("--tpot-ms", type=float, default=10.0)
    work = ap.add_mutually_exclusive_group()
    work.add_argument("--gpu-work", action="store_true", help="a matrix product on the GPU before each token (PyTorch)")
    work.add_argument("--model", choices=("gpt2-small",),
                      help="stream a GPT-2-shaped model's greedy tokens (CUDA, random weights) instead of the schedule")
    ap.add_argument("--impl", choices=("auto", "hf", "plain"), default="auto",
                    help="--model: transformers' GPT2LMHeadModel (hf), llm_generate.py's plain-torch decoder, "
                         "or hf where importable (auto)")
    ap.add_argument("--layers", type=int, default=12, help="--model: transformer blocks")
    ap.add_argument("--hidden", type=int, default=768, help="--model: hidden size")
    ap.add_argument("--heads", type=int, default=12, help="--model: attention heads")
    ap.add_argument("--vocab", type=int, default=50257, help="--model: vocabulary size")
    ap.add_argument("--dtype", choices=("float16", "bfloat16", "float32"), default="float16", help="--model: weights")
    ap.add_argument("--max-requests", type=int, default=0, help="exit after this many responses (0: never)")
    cfg = ap.parse_args()
    if cfg.model and (cfg.hidden % cfg.heads or min(cfg.layers, cfg.hidden, cfg.heads, cfg.vocab) <= 0):
        ap.error("--model: --layers, --hidden, --heads and --vocab must be positive, --hidden a multiple of --heads")
    try:
        server = Server(("127.0.0.1", cfg.port), cfg)
    except ModelUnavailable as e:
        print(f"mock_server.py: --model {cfg.model}: {e}", file=sys.stderr)
        return 2
    if server.model:
        print(f"mock_server.py: --model {cfg.model}: {server.model.kind} implementation, {cfg.layers} layers, "
              f"hidden {cfg.hidden}, {cfg.heads} heads, vocabulary {cfg.vocab}, {cfg.dtype}, on CUDA, warmed up",
              file=sys.stderr, flush=True)
    port = server.server_address[1]
    if cfg.port_file:
        with open(cfg.port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        os.replace(cfg.port_file + ".tmp", cfg.port_file)
    print(f"PORT {port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
