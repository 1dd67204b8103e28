#!/usr/bin/env python3
"""The Python programs of the steady-state check, each timing itself step by step.

validation/steady_check.py runs each under a plain `gpuscope trace` (and resnet18 and transformer
also untraced and under --pytorch=ops,modules) and compares gpuscope's steady iteration time with
the program's own clock. Each program has a warm-up that differs from its steady steps, as real
ones do:

  resnet18     torchvision resnet18 training, batch 32, 3x112x112, SGD (momentum 0.9), cuDNN
               autotuning on (torch.backends.cudnn.benchmark: the first step tries algorithms);
               each step ends with loss.item()
  transformer  a small GPT (6 blocks, d 512, 8 heads, sequence 256, batch 16, vocabulary 8192) with
               F.scaled_dot_product_attention (causal), trained under bf16 autocast with AdamW; each
               step ends with loss.item()
  generate     Hugging Face transformers' generate() on a GPT-2-shaped model (GPT2Config, random
               weights, fp16, nothing downloaded), greedy, exactly --new-tokens tokens per call; one
               step is one generate() call, and a streamer also clocks every token
  lightning    PyTorch Lightning Trainer.fit of a small CNN on random CPU data, DataLoader with
               num_workers=2 and pin_memory; a callback clocks every training batch
  jax          a JAX MLP (2048 -> 8192 -> 8192 -> 2048, batch 1024) trained by a jitted SGD step (its
               first call compiles); each step ends with block_until_ready()

The clock: after each step the program waits for the GPU (torch.cuda.synchronize(), or JAX's
block_until_ready()) and reads time.perf_counter() (the step's wall time, from the end of the
previous step: what the step costs in the loop) and time.time_ns() (CLOCK_REALTIME, gpuscope's
trace clock). It writes JSON lines to the file named by --clock or the environment variable
GPUSCOPE_STEADY_CLOCK:
  {"kind": "start", "end_ns": NS}                        before the first step (after a synchronize)
  {"kind": "step", "i": I, "ms": MS, "end_ns": NS}       after each step
  {"kind": "token", "i": K, "call": C, "ms": MS, "end_ns": NS}   generate: after each token
and prints one line RESULT program=NAME steps=N median_ms=M first_ms=F pid=P.

Exit status: 0 done; 2 usage error or no GPU; 77 a package the program needs is missing (the
message names it), so the caller reports the program as skipped.

Usage: steady_programs.py PROGRAM [--steps N] [--clock FILE] (PROGRAM: resnet18, transformer,
       generate, lightning, jax; generate: --new-tokens T, steps are generate() calls)
"""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

MISSING = 77
PROGRAMS = ("resnet18", "transformer", "generate", "lightning", "jax")


def missing(what, error):
    print(f"steady_programs: {what} ({error})", file=sys.stderr)
    sys.exit(MISSING)


class Clock:
    """Per-step clock: wait() is the program's way to wait for its GPU work."""

    def __init__(self, path, wait):
        self.path = path
        self.wait = wait
        self.records = []
        self.steps_ms = []
        self.last = None
        self.last_token = None
        self.tokens = 0

    def start(self):
        self.wait()
        self.last = self.last_token = time.perf_counter()
        self.records.append({"kind": "start", "end_ns": time.time_ns()})

    def step(self):
        self.wait()
        now = time.perf_counter()
        end_ns = time.time_ns()
        ms = (now - self.last) * 1e3
        self.records.append({"kind": "step", "i": len(self.steps_ms), "ms": ms, "end_ns": end_ns})
        self.steps_ms.append(ms)
        self.last = self.last_token = now

    def token(self):
        self.wait()
        now = time.perf_counter()
        self.records.append({"kind": "token", "i": self.tokens, "call": len(self.steps_ms),
                             "ms": (now - self.last_token) * 1e3, "end_ns": time.time_ns()})
        self.tokens += 1
        self.last_token = now

    def finish(self, name):
        if self.path:
            Path(self.path).write_text("".join(json.dumps(r) + "\n" for r in self.records))
        ms = self.steps_ms
        median = statistics.median(ms[len(ms) // 2:]) if ms else float("nan")
        print(f"{name}: {len(ms)} steps, first {ms[0] if ms else float('nan'):.3f} ms, median of the second half "
              f"{median:.3f} ms")
        print(f"RESULT program={name} steps={len(ms)} median_ms={median:.4f} "
              f"first_ms={ms[0] if ms else float('nan'):.4f} pid={os.getpid()}")


def need_torch():
    try:
        import torch
    except ImportError as e:
        missing("needs PyTorch", e)
    if not torch.cuda.is_available():
        print("steady_programs: torch.cuda.is_available() is False: this needs a GPU", file=sys.stderr)
        sys.exit(2)
    return torch


def torch_clock(a, torch):
    return Clock(a.clock, torch.cuda.synchronize)


def resnet18(a):
    torch = need_torch()
    try:
        import torchvision
    except ImportError as e:
        missing("needs torchvision", e)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "pytorch"))
    import resnet_train
    torch.backends.cudnn.benchmark = True  # the first step autotunes: a warm-up that differs
    model, optimizer, loss_fn, images, labels = resnet_train.make_training(torchvision, batch=32, size=112)
    clock = torch_clock(a, torch)
    clock.start()
    for _ in range(a.steps):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        loss.item()
        clock.step()
    clock.finish("resnet18")


def transformer(a):
    torch = need_torch()
    from torch import nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
                       for t in self.qkv(self.ln1(x)).split(d, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self, vocab=8192, d=512, layers=6, heads=8, seq=256):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, ids):
            x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
            return self.head(self.ln(self.blocks(x)))

    torch.manual_seed(0)
    model = GPT().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    ids = torch.randint(0, 8192, (16, 257), device="cuda")
    inputs, targets = ids[:, :-1], ids[:, 1:]
    clock = torch_clock(a, torch)
    clock.start()
    for _ in range(a.steps):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(inputs)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())
        loss.backward()
        optimizer.step()
        loss.item()
        clock.step()
    clock.finish("transformer")


def generate(a):
    torch = need_torch()
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError as e:
        missing("needs transformers", e)
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024, bos_token_id=None,
                     eos_token_id=None)
    model = GPT2LMHeadModel(cfg).to("cuda", torch.float16).eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    clock = torch_clock(a, torch)

    class Streamer:  # transformers' BaseStreamer interface: the prompt first, then each token
        def __init__(self):
            self.prompt_seen = False

        def put(self, value):
            if self.prompt_seen:
                clock.token()
            self.prompt_seen = True

        def end(self):
            pass

    ids = torch.randint(0, cfg.vocab_size, (1, 32), device="cuda")
    with torch.inference_mode():
        clock.start()
        for _ in range(a.steps):
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=a.new_tokens,
                           do_sample=False, streamer=Streamer())  # no end of sequence: exactly new_tokens
            clock.step()
    clock.finish("generate")


def lightning(a):
    torch = need_torch()
    try:
        import lightning as L
    except ImportError:
        try:
            import pytorch_lightning as L
        except ImportError as e:
            missing("needs PyTorch Lightning (lightning or pytorch_lightning)", e)
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    class Net(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1),
                                     nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.cross_entropy(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9)

    clock = torch_clock(a, torch)

    class StepClock(L.Callback):
        def on_train_start(self, trainer, module):
            clock.start()

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            clock.step()

    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    n = 64 * (a.steps + 2)
    data = TensorDataset(torch.randn(n, 3, 64, 64), torch.randint(0, 10, (n,)))
    loader = DataLoader(data, batch_size=64, num_workers=2, pin_memory=True, shuffle=False)
    trainer = L.Trainer(max_steps=a.steps, max_epochs=1, accelerator="gpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0, limit_val_batches=0, callbacks=[StepClock()])
    trainer.fit(Net(), loader)
    clock.finish("lightning")


def jax_loop(a):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave the GPU's memory to others
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        missing("needs JAX", e)
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        missing("needs JAX with a GPU backend", e)
    if not gpus:
        missing("needs JAX with a GPU backend", "jax.devices('gpu') is empty")
    sizes = (2048, 8192, 8192, 2048)  # ~0.6 TFLOP a step (batch 1024): a few ms, not the dispatch alone
    key = jax.random.PRNGKey(0)
    keys = jax.random.split(key, len(sizes) + 1)
    params = [jax.random.normal(k, (m, n), jnp.float32) / (m ** 0.5)
              for k, m, n in zip(keys, sizes[:-1], sizes[1:])]
    x = jax.random.normal(keys[-1], (1024, sizes[0]), jnp.float32)
    y = jnp.roll(x, 1, axis=1)

    def loss_fn(ps, x, y):
        h = x
        for w in ps[:-1]:
            h = jax.nn.relu(h @ w)
        return jnp.mean((h @ ps[-1] - y) ** 2)

    @jax.jit
    def update(ps, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(ps, x, y)
        return [p - 1e-3 * g for p, g in zip(ps, grads)], loss

    waiting = []
    clock = Clock(a.clock, lambda: [v.block_until_ready() for v in waiting])
    waiting[:] = [x]
    clock.start()
    for _ in range(a.steps):
        params, loss = update(params, x, y)
        waiting[:] = [loss, *params]
        clock.step()
    clock.finish("jax")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("program", choices=PROGRAMS)
    p.add_argument("--steps", type=int, default=40, help="steps (generate: generate() calls; default 40)")
    p.add_argument("--new-tokens", type=int, default=16, help="generate: tokens per call (default 16)")
    p.add_argument("--clock", default=os.environ.get("GPUSCOPE_STEADY_CLOCK"),
                   help="JSON-lines file for the per-step clock (default: $GPUSCOPE_STEADY_CLOCK)")
    a = p.parse_args()
    if a.steps < 1 or a.new_tokens < 1:
        print("steady_programs: --steps and --new-tokens must be >= 1", file=sys.stderr)
        return 2
    {"resnet18": resnet18, "transformer": transformer, "generate": generate, "lightning": lightning,
     "jax": jax_loop}[a.program](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
