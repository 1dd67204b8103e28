#!/usr/bin/env python3
"""A GPT-2-shaped language model generating tokens, timing itself token by token.

The reference for `gpuscope stats -r llm_sum` (validation/llm_check.py): the model is built
from a config with random weights (nothing downloaded) — Hugging Face transformers'
GPT2LMHeadModel and its `generate` when transformers can be imported (--model hf), else a
small hand-written decoder with a KV cache and a greedy loop in plain torch (--model plain;
--model auto picks). Greedy decoding, exactly --new-tokens tokens per generation (no end of
sequence), --generations generate calls in a row (the first is the warm-up: cuDNN plans,
torch.compile's compilation, the caching allocator's growth).

A streamer synchronizes the GPU at each token and reads the clock (time.perf_counter_ns):
  - first_forward: when the model is called for the prefill (a forward pre-hook: where
    llm_sum starts TTFT without a generate() call), generate_start: when generate was called
    (where llm_sum starts it for transformers' generate(), gpuscope's range around it);
  - token_times: when each generated token is on the host (after torch.cuda.synchronize()).
It writes --out JSON: {"model", "compile", "batch", "prompt_len", "new_tokens",
"generations": [{"ttft_ms" (first_forward → token 1), "ttft_from_generate_ms",
"tpot_ms": [token k-1 → token k, ...], "token_times_ns", "first_forward_ns",
"generate_start_ns"}]} and one line "RESULT ..." per generation.

Usage: llm_generate.py [--batch 1] [--prompt-len 32] [--new-tokens 32] [--generations 4]
                       [--compile] [--model auto|hf|plain] [--dtype float16] [--out llm.json]
Exits 2 with a message when torch (with CUDA) is missing.
"""
import argparse
import json
import math
import sys
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt-len", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--generations", type=int, default=4)
    p.add_argument("--compile", action="store_true", help="torch.compile the model's forward")
    p.add_argument("--model", choices=("auto", "hf", "plain"), default="auto")
    p.add_argument("--dtype", choices=("float16", "bfloat16", "float32"), default="float16")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--out", default="llm_generate.json")
    return p.parse_args()


try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # the scripts that run this one read the exit code
    print(f"llm_generate.py: PyTorch is not importable here ({e}); install torch with CUDA", file=sys.stderr)
    sys.exit(2)


class Clock:
    """The streamer's clock: the prefill's model call and each token on the host."""

    def __init__(self):
        self.first_forward = None
        self.tokens = []

    def reset(self):
        self.first_forward = None
        self.tokens = []

    def pre_hook(self, module, args, kwargs=None):
        if self.first_forward is None:
            self.first_forward = time.perf_counter_ns()

    def token(self):
        torch.cuda.synchronize()
        self.tokens.append(time.perf_counter_ns())


# --- the plain-torch decoder (GPT-2's layout: learned positions, pre-norm blocks, tied head) ---
class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.attn_qkv = nn.Linear(d, 3 * d)
        self.attn_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x, cache):
        b, s, d = x.shape
        q, k, v = self.attn_qkv(self.ln_1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        if cache is not None:  # the KV cache grows by the new tokens
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None and s > 1)
        x = x + self.attn_proj(y.transpose(1, 2).reshape(b, s, d))
        x = x + self.mlp_proj(F.gelu(self.mlp_fc(self.ln_2(x)), approximate="tanh"))
        return x, (k, v)


class PlainGPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, positions=2048):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)  # first: its indices [batch, tokens] tell prefill from decode
        self.wpe = nn.Embedding(positions, d)
        self.h = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids, past=None):
        start = 0 if past is None else past[0][0].shape[2]
        x = self.wte(ids) + self.wpe(torch.arange(start, start + ids.shape[1], device=ids.device))
        new = []
        for i, block in enumerate(self.h):
            x, kv = block(x, None if past is None else past[i])
            new.append(kv)
        return F.linear(self.ln_f(x[:, -1:]), self.wte.weight), new


def plain_generate(model, forward, ids, n, clock):
    past = None
    for _ in range(n):
        logits, past = forward(ids, past)
        ids = logits[:, -1].argmax(dim=-1, keepdim=True)
        ids.cpu()  # the token on the host, as a streamer takes it
        clock.token()
    return ids


def build(a, dtype):
    """(kind, module called per forward, generate(ids, n, clock)) for --model. The module called is
    the one whose call gpuscope's hooks record as the model (and whose pre-hook runs outside
    any compiled code)."""
    want_hf = a.model in ("auto", "hf")
    if want_hf:
        try:
            import transformers  # noqa: F401
            from transformers import GPT2Config, GPT2LMHeadModel
        except ImportError as e:
            if a.model == "hf":
                print(f"llm_generate.py: --model hf needs transformers ({e})", file=sys.stderr)
                sys.exit(2)
            want_hf = False
    if want_hf:
        cfg = GPT2Config(vocab_size=a.vocab, n_embd=a.hidden, n_layer=a.layers, n_head=a.heads,
                         n_positions=max(1024, a.prompt_len + a.new_tokens), bos_token_id=None, eos_token_id=None)
        model = GPT2LMHeadModel(cfg).to("cuda", dtype).eval()
        model.generation_config.eos_token_id = None
        model.generation_config.pad_token_id = 0
        if a.compile:
            model.forward = torch.compile(model.forward)

        class Streamer:  # transformers' BaseStreamer interface
            def __init__(self, clock):
                self.clock, self.prompt_seen = clock, False

            def put(self, value):
                if not self.prompt_seen:  # generate() puts the prompt first
                    self.prompt_seen = True
                    return
                self.clock.token()

            def end(self):
                pass

        def generate(ids, n, clock):
            return model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n,
                                  do_sample=False, streamer=Streamer(clock))

        return "hf", model, generate
    model = PlainGPT(a.vocab, a.hidden, a.layers, a.heads).to("cuda", dtype).eval()
    forward = torch.compile(model) if a.compile else model
    return "plain", forward, lambda ids, n, clock: plain_generate(model, forward, ids, n, clock)


def percentile(xs, p):
    xs = sorted(xs)
    r = p / 100 * (len(xs) - 1)
    lo = math.floor(r)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (r - lo)


def main():
    a = parse()
    if not torch.cuda.is_available():
        print("llm_generate.py: torch.cuda.is_available() is False: this needs a GPU", file=sys.stderr)
        sys.exit(2)
    dtype = getattr(torch, a.dtype)
    torch.manual_seed(0)
    kind, called, generate = build(a, dtype)
    clock = Clock()
    called.register_forward_pre_hook(clock.pre_hook)
    ids = torch.randint(0, a.vocab, (a.batch, a.prompt_len), device="cuda")
    torch.cuda.synchronize()
    gens = []
    with torch.inference_mode():
        for g in range(a.generations):
            clock.reset()
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            generate(ids, a.new_tokens, clock)
            t = clock.tokens
            rec = {"generate_start_ns": t0, "first_forward_ns": clock.first_forward, "token_times_ns": t,
                   "ttft_ms": (t[0] - clock.first_forward) / 1e6, "ttft_from_generate_ms": (t[0] - t0) / 1e6,
                   "tpot_ms": [(t[i] - t[i - 1]) / 1e6 for i in range(1, len(t))]}
            gens.append(rec)
            tp = rec["tpot_ms"]
            print(f"RESULT generation={g} model={kind} compile={int(a.compile)} batch={a.batch} tokens={len(t)} "
                  f"ttft_ms={rec['ttft_ms']:.3f} ttft_from_generate_ms={rec['ttft_from_generate_ms']:.3f} "
                  f"tpot_mean_ms={sum(tp) / max(len(tp), 1):.3f} tpot_p50_ms={percentile(tp, 50) if tp else 0:.3f}",
                  flush=True)
    with open(a.out, "w") as f:
        json.dump({"model": kind, "compile": a.compile, "batch": a.batch, "prompt_len": a.prompt_len,
                   "new_tokens": a.new_tokens, "dtype": a.dtype, "generations": gens}, f, indent=1)


if __name__ == "__main__":
    main()
