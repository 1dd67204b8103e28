#!/usr/bin/env python3
"""mock_server.py --model on a machine without a GPU (the lead runs the model on one).

  test_model_server.py BUILD_DIR [--tolerance-ms MS]   (CTest: 500, see tests/serve/CMakeLists.txt)

Checks that
  - `mock_server.py --model gpt2-small` without torch, or without CUDA, exits 2 saying what
    is missing, and announces no port (skipped, exit 77, where torch has CUDA: there the
    model runs, see docs/validation.md);
  - --model with --gpu-work, or --hidden not a multiple of --heads, is refused (exit 2);
  - the prompt's token ids: one per word, deterministic, within the vocabulary, the oldest
    cut to the limit;
  - the model mode's request path, with a stand-in for torch and for llm_generate.build (a
    generation that takes 2 ms a token and calls the clock as llm_generate's do): `gpuscope
    bench serve` at concurrency 4 gets every token, the server's log agrees with it
    (compare_serve.py), the stand-in was asked for the prompt's word count and max_tokens,
    generations never overlapped and ran on one thread (one GPU), and "[close]" / "[error]" prompts end
    their generation early with their request's error.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "mock_server.py")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def torch_state():
    """'none', 'cpu' or 'cuda': what the interpreter running the server would find."""
    p = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"], capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        return "none"
    return "cuda" if p.stdout.strip() == "True" else "cpu"


def check_refusals(tmp):
    state = torch_state()
    if state == "cuda":
        print("skip: torch with CUDA is importable here, --model would build the model (a GPU run)")
        return False
    port_file = os.path.join(tmp, "port")
    p = subprocess.run([sys.executable, SERVER, "--model", "gpt2-small", "--port-file", port_file], capture_output=True,
                       text=True, timeout=300)
    missing = "PyTorch is not importable" if state == "none" else "needs a CUDA GPU"
    check(p.returncode == 2 and "--model gpt2-small" in p.stderr and missing in p.stderr,
          f"--model without {'torch' if state == 'none' else 'CUDA'}: exit 2 saying so "
          f"({p.returncode}: {p.stderr.strip()})")
    check(not os.path.exists(port_file) and "PORT" not in p.stdout, "... and no port announced")
    for args, what in ((["--gpu-work"], "not allowed with"), (["--hidden", "100", "--heads", "12"], "a multiple of")):
        p = subprocess.run([sys.executable, SERVER, "--model", "gpt2-small", *args], capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 2 and what in p.stderr, f"--model {' '.join(args)}: refused ({p.returncode})")
    return True


class FakeTorch(types.ModuleType):
    """What ModelRunner takes from torch, on the CPU."""

    float16 = "float16"

    def __init__(self):
        super().__init__("torch")
        self.cuda = types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None)
        self.synchronized = 0

    def manual_seed(self, seed):
        pass

    def inference_mode(self):
        import contextlib

        return contextlib.nullcontext()

    def tensor(self, data, device=None):
        return data


def install_fakes():
    """A torch and an llm_generate whose build() returns a generation of 2 ms a token; returns
    the record of the generations it ran: (prompt ids, n, start, end, tokens made)."""
    sys.modules["torch"] = FakeTorch()
    runs = []
    lock = threading.Lock()

    def generate(ids, n, clock):
        with lock:
            run = {"ids": ids[0], "n": n, "start": time.monotonic(), "tokens": 0,
                   "thread": threading.get_ident()}
            runs.append(run)
        try:
            for _ in range(n):
                time.sleep(0.002)
                run["tokens"] += 1
                clock.token()
        finally:
            run["end"] = time.monotonic()

    llm = types.ModuleType("llm_generate")
    llm.build = lambda a, dtype: ("fake", None, generate)
    sys.modules["llm_generate"] = llm
    return runs


def check_model_requests(build, tmp, tolerance_ms):
    runs = install_fakes()
    sys.path.insert(0, HERE)
    import mock_server

    log = os.path.join(tmp, "log.jsonl")
    cfg = argparse.Namespace(log=log, ttft_ms=30.0, tpot_ms=10.0, gpu_work=False, model="gpt2-small", impl="auto",
                             layers=2, hidden=64, heads=4, vocab=50257, dtype="float16", max_requests=0)
    server = mock_server.Server(("127.0.0.1", 0), cfg)
    check(server.model is not None and server.model.kind == "fake" and len(runs) == 2 and
          [len(r["ids"]) for r in runs] == [16, 128] and all(r["tokens"] == 32 for r in runs),
          "the model is warmed up by two generations of 32 tokens at start "
          f"({[(len(r['ids']), r['tokens']) for r in runs]})")
    warm_thread = runs[0]["thread"] if runs else None
    del runs[:]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        out, reqs = os.path.join(tmp, "run.json"), os.path.join(tmp, "requests.jsonl")
        gpuscope = os.path.join(build, "bin", "gpuscope")
        p = subprocess.run([gpuscope, "bench", "serve", "--url", url, "--num-requests", "12", "--concurrency", "4",
                            "--warmup", "4", "--input-len", "16", "--output-len", "8", "--json", out, "--requests-log",
                            reqs, "-f"], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"bench serve against --model (stand-in) ({p.returncode}: {p.stderr.strip()[-300:]})")
        records = [json.loads(line) for line in open(log)]
        check(len(records) == 16 and all(r["outcome"] == "ok" and len(r["tokens"]) == 8 for r in records),
              f"the server logged 16 requests of 8 tokens ({len(records)})")
        check(len(runs) == 16 and all(len(r["ids"]) == 16 and r["n"] == 8 for r in runs),
              "each request is one generation of max_tokens tokens from a prompt of its word count")
        spans = sorted((r["start"], r["end"]) for r in runs)
        check(all(a[1] <= b[0] for a, b in zip(spans, spans[1:])) and len({r["thread"] for r in runs}) == 1 and
              runs[0]["thread"] == warm_thread, "generations never overlap, all on the warm-up's thread (one GPU)")
        c = subprocess.run([sys.executable, os.path.join(HERE, "compare_serve.py"), "--server-log", log, "--json", out,
                            "--requests", reqs, "--skip", "4", "--tolerance-ms", str(tolerance_ms)],
                           capture_output=True, text=True, timeout=60)
        print(c.stdout, end="")
        check(c.returncode == 0, f"compare_serve.py: gpuscope agrees with the server's log within {tolerance_ms} ms")

        open(log, "w").close()
        del runs[:]
        prompts = os.path.join(tmp, "prompts.jsonl")
        with open(prompts, "w") as f:
            for text in ("a b c [close]", "b [error]", "plain words here"):
                f.write(json.dumps({"prompt": text, "max_tokens": 6}) + "\n")
        p = subprocess.run([gpuscope, "bench", "serve", "--url", url, "--prompts", prompts,
                            "--num-requests", "3", "--warmup", "0", "--concurrency", "1", "-f"],
                           capture_output=True, text=True, timeout=120)
        records = {r["prompt"]: r for r in (json.loads(line) for line in open(log))}
        by_len = {len(r["ids"]): r["tokens"] for r in runs}
        check(records.get("a b c [close]", {}).get("outcome") == "close" and by_len.get(4) == 2,
              f"[close]: two tokens, then the generation stops and the connection closes ({by_len})")
        check(records.get("b [error]", {}).get("outcome") == "error" and by_len.get(2) == 1,
              "[error]: one token and the error event, the generation stops")
        check(records.get("plain words here", {}).get("outcome") == "ok" and by_len.get(3) == 6 and
              len(records["plain words here"]["tokens"]) == 6, "a normal request after them: 6 tokens")
        out = p.stdout + p.stderr
        # The value column is as wide as its widest value (the throughputs vary with the
        # machine's speed), so the row is matched on its words and value, not its spacing.
        ok = (p.returncode == 0 and re.search(r"^Requests failed +2\.00 +requests$", out, re.M) is not None and
              "(after 2 tokens)" in out and "mock: preempted" in out)
        check(ok, f"bench serve counts the two failed requests, saying why ({p.returncode})")
        if not ok:
            print(out[-2000:])
    finally:
        server.shutdown()


def check_prompt_ids():
    sys.path.insert(0, HERE)
    import mock_server

    ids = mock_server.prompt_ids("the of  and\nthe", 50257, 100)
    check(len(ids) == 4 and ids[0] == ids[3] and len(set(ids)) == 3 and all(0 <= i < 50257 for i in ids),
          f"prompt ids: one per word, the same word the same id ({ids})")
    check(mock_server.prompt_ids("the of and the", 50257, 2) == ids[-2:], "prompt ids: the oldest cut to the limit")
    check(mock_server.prompt_ids("", 7, 5) == [0], "an empty prompt: one id")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--tolerance-ms", type=float, default=20.0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuscope-model-server-") as tmp:
        if not check_refusals(tmp):
            return 77
        check_prompt_ids()
        check_model_requests(a.build, tmp, a.tolerance_ms)
    print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
