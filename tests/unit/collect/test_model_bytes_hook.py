#!/usr/bin/env python3
"""The model bytes that gpuscope's --pytorch=modules hook adds to the outermost module's range
(src/collect/python/sitecustomize.py; docs/trace-schema.md, "Model bytes"), without torch: a
stand-in torch module (tensors that know numel, element_size, dtype and shape; nn.Module with
named_modules, parameters, buffers; NVTX push/pop into a list), every number computed by hand.

With --bench N, also prints the hook's Python cost per call over N calls (stand-in tensors:
real torch tensors answer numel()/element_size() through C, about as fast)."""
import importlib.util
import os
import sys
import time
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SITE = os.path.join(HERE, "../../../src/collect/python/sitecustomize.py")


class DType:
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __str__(self):
        return "torch." + self.name

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, DType) and other.name == self.name


F16, F32, BOOL, I64 = DType("float16", 2), DType("float32", 4), DType("bool", 1), DType("int64", 8)


class Tensor:
    def __init__(self, *shape, dtype=F16):
        self.shape, self.dtype = tuple(shape), dtype

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self):
        return self.dtype.itemsize

    def dim(self):
        return len(self.shape)


class Module:
    def __init__(self):
        self._params, self._buffers, self._children = [], [], []

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self._children:
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def parameters(self):  # unique, as torch's (tied weights once)
        seen = set()
        for _, m in self.named_modules():
            for p in m._params:
                if id(p) not in seen:
                    seen.add(id(p))
                    yield p

    def buffers(self):
        for _, m in self.named_modules():
            yield from m._buffers

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class Identity(Module):
    def forward(self, x):
        return x


class Sequential(Module):
    def __init__(self, *mods):
        super().__init__()
        self._children = [(str(i), m) for i, m in enumerate(mods)]

    def forward(self, x):
        for _, m in self._children:
            x = m(x)
        return x


def fake_torch(log):
    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    torch.zeros = lambda *shape: Tensor(*shape)
    torch.nn = types.SimpleNamespace(Sequential=Sequential, Identity=Identity)
    sys.modules["torch"] = torch
    nvtx = types.SimpleNamespace(range_push=log.append, range_pop=lambda: log.append(None), mark=lambda m: None)
    torch.cuda = types.SimpleNamespace(nvtx=nvtx)
    torch.compiler = types.SimpleNamespace(is_compiling=lambda: False)
    modmod = types.ModuleType("torch.nn.modules.module")
    modmod.Module = Module
    sys.modules["torch.nn.modules.module"] = modmod
    return torch


def load_site():
    env = os.environ.pop("GPUSCOPE_PYTORCH", None)
    spec = importlib.util.spec_from_file_location("gpuscope_site_under_test", SITE)
    site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(site)
    if env is not None:
        os.environ["GPUSCOPE_PYTORCH"] = env
    return site


# A GPT-2-like model: wte [100, 8] f16 tied with the head, wpe [16, 8], 2 blocks of a Linear
# [24, 8] + bias [24] and a bool causal mask [1, 1, 16, 16] (left out), a float buffer [8] f32.
class Block(Module):
    def __init__(self):
        super().__init__()
        self._params = [Tensor(24, 8), Tensor(24)]
        self._buffers = [Tensor(1, 1, 16, 16, dtype=BOOL)]

    def forward(self, x):
        return x


class Model(Module):
    def __init__(self):
        super().__init__()
        self.wte = Module()
        self.wte._params = [Tensor(100, 8)]
        self.head = Module()
        self.head._params = self.wte._params  # tied
        self.wpe = Module()
        self.wpe._params = [Tensor(16, 8)]
        self.blocks = [Block(), Block()]
        self._buffers = [Tensor(8, dtype=F32)]
        self._children = [("wte", self.wte), ("wpe", self.wpe), ("h.0", self.blocks[0]), ("h.1", self.blocks[1]),
                          ("head", self.head)]

    def forward(self, ids, *rest, past_key_values=None, **kwargs):
        for b in self.blocks:
            b(ids)
        return ids


# 2 x (100*8 + 16*8 + 2*(24*8 + 24)) f16 + 8 f32 = 2 x 1360 + 32
WEIGHT_BYTES = 2 * (100 * 8 + 16 * 8 + 2 * (24 * 8 + 24)) + 8 * 4


class DynamicLayer:  # transformers >= 4.54
    def __init__(self, k, v):
        self.keys, self.values = k, v


class DynamicCache:
    def __init__(self, layers):
        self.layers = layers


class OldDynamicCache:  # transformers 4.36 - 4.53
    def __init__(self, keys, values):
        self.key_cache, self.value_cache = keys, values


class StaticLayer(DynamicLayer):
    pass


class StaticCache(OldDynamicCache):
    pass


class EncoderDecoderCache:
    def __init__(self, a, b):
        self.self_attention_cache, self.cross_attention_cache = a, b


def kv(batch, tokens):  # one layer's key or value: [B, heads 2, T, head dim 4] f16
    return Tensor(batch, 2, tokens, 4)


KV_PER_TOKEN = 2 * 4 * 2  # per sequence, per layer, key or value: 16 bytes


class HookTest(unittest.TestCase):
    def setUp(self):
        self.site = load_site()
        self.log = []
        self.torch = fake_torch(self.log)
        self.saved_call = Module.__call__
        self.site._enable_modules(self.torch)

    def tearDown(self):
        Module.__call__ = self.saved_call

    def ranges(self):
        return [x for x in self.log if x is not None]

    def test_module_calibration_records_nothing_and_restores_the_wrapper(self):
        # At exit the wrapper is installed; the calibration times a second wrapper whose edges go
        # to the observer's scratch sink against the untraced __call__, and records no range.
        edges = []
        observer = types.SimpleNamespace(scratch_begin=edges.append, scratch_end=lambda: edges.append(None))
        installed = Module.__call__
        ns = self.site._calibrate_modules(self.torch, observer, blocks=3, iterations=10)
        self.assertIs(Module.__call__, installed)
        self.assertEqual(self.ranges(), [])
        self.assertEqual(len(edges), 3 * 10 * 3 * 2)  # 3 blocks x 10 iterations x 3 module calls, two edges each
        self.assertGreaterEqual(ns, 0.0)

    def test_weight_bytes_count_tied_weights_once_and_leave_out_bool_buffers(self):
        self.assertEqual(self.site._weight_fields(Model()), f", weight_bytes = {WEIGHT_BYTES}, weight_dtype = float16")

    def test_only_the_outermost_call_carries_the_bytes(self):
        m = Model()
        m(Tensor(1, 7))
        r = self.ranges()
        self.assertEqual(r[0], f"nn.Module: Model (Model), weight_bytes = {WEIGHT_BYTES}, weight_dtype = float16")
        self.assertEqual(r[1:], ["nn.Module: h.0 (Block)", "nn.Module: h.1 (Block)"])
        self.assertEqual(self.log.count(None), 3)

    def test_dynamic_cache_new_layout(self):
        m = Model()
        cache = DynamicCache([DynamicLayer(kv(2, 9), kv(2, 9)) for _ in range(2)])
        m(Tensor(2, 1), past_key_values=cache)
        # 2 layers x (key + value) x 2 sequences x 9 tokens x 16 bytes
        self.assertTrue(self.ranges()[0].endswith(f", kv_bytes = {2 * 2 * 2 * 9 * KV_PER_TOKEN}, kv_tokens = 9"),
                        self.ranges()[0])

    def test_empty_dynamic_cache_at_the_prefill(self):
        m = Model()
        m(Tensor(1, 7), past_key_values=DynamicCache([DynamicLayer(None, None) for _ in range(2)]))
        self.assertTrue(self.ranges()[0].endswith(", kv_bytes = 0, kv_tokens = 0"), self.ranges()[0])

    def test_dynamic_cache_old_layout(self):
        m = Model()
        cache = OldDynamicCache([kv(1, 5), kv(1, 5)], [kv(1, 5), kv(1, 5)])
        m(Tensor(1, 1), past_key_values=cache)
        self.assertTrue(self.ranges()[0].endswith(f", kv_bytes = {2 * 2 * 5 * KV_PER_TOKEN}, kv_tokens = 5"))

    def test_static_cache_says_allocated(self):
        m = Model()
        cache = StaticCache([kv(1, 64), kv(1, 64)], [kv(1, 64), kv(1, 64)])
        m(Tensor(1, 1), past_key_values=cache)
        self.assertTrue(self.ranges()[0].endswith(f", kv_bytes = {2 * 2 * 64 * KV_PER_TOKEN}, kv_static = 1"))
        self.log.clear()
        new = DynamicCache([StaticLayer(kv(1, 32), kv(1, 32)) for _ in range(2)])
        m(Tensor(1, 1), past_key_values=new)
        self.assertTrue(self.ranges()[0].endswith(f", kv_bytes = {2 * 2 * 32 * KV_PER_TOKEN}, kv_static = 1"))

    def test_legacy_tuples_passed_positionally(self):
        m = Model()
        past = [(kv(1, 3), kv(1, 3)), (kv(1, 3), kv(1, 3))]
        m(Tensor(1, 1), past)
        self.assertTrue(self.ranges()[0].endswith(f", kv_bytes = {2 * 2 * 3 * KV_PER_TOKEN}, kv_tokens = 3"))

    def test_encoder_decoder_cache_sums_both(self):
        m = Model()
        a = DynamicCache([DynamicLayer(kv(1, 4), kv(1, 4))])
        b = DynamicCache([DynamicLayer(kv(1, 10), kv(1, 10))])
        m(Tensor(1, 1), past_key_values=EncoderDecoderCache(a, b))
        self.assertTrue(self.ranges()[0].endswith(f", kv_bytes = {2 * 14 * KV_PER_TOKEN}, kv_tokens = 4"))

    def test_things_that_are_not_caches(self):
        m = Model()
        m(Tensor(1, 1), [Tensor(3, 4)], (1, 2), {"a": 1}, past_key_values=None, use_cache=True)
        self.assertEqual(self.ranges()[0], f"nn.Module: Model (Model), weight_bytes = {WEIGHT_BYTES}, "
                         "weight_dtype = float16")

    def test_a_module_without_weights_keeps_its_plain_message(self):
        loss = Block()
        loss._params, loss._buffers = [], []
        loss(Tensor(1))
        self.assertEqual(self.ranges(), ["nn.Module: Block (Block)"])


def bench(n):
    """The root call's extra work: its message without a cache (a cached string plus a kwargs
    scan) and with a 12-layer dynamic cache (24 tensors' numel x element_size)."""
    site = load_site()
    torch = fake_torch([])
    site._enable_modules(torch)
    m = Model()
    m(Tensor(1, 1))  # names the tree, counts the weights
    message = site._model_message("nn.Module: Model (Model)", site._weight_fields(m), Tensor)
    cache = DynamicCache([DynamicLayer(kv(1, 64), kv(1, 64)) for _ in range(12)])
    args = (Tensor(1, 1),)
    for what, kw in (("no cache", {"attention_mask": None, "use_cache": True}),
                     ("12-layer DynamicCache", {"past_key_values": cache, "attention_mask": None, "use_cache": True})):
        t0 = time.perf_counter()
        for _ in range(n):
            message(args, kw)
        print(f"root message, {what}: {(time.perf_counter() - t0) / n * 1e6:.2f} us per forward")
    t0 = time.perf_counter()
    for _ in range(n):
        site._weight_fields(m)
    print(f"weight count (once per model object; 8 tensors here): {(time.perf_counter() - t0) / n * 1e6:.2f} us")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--bench":
        bench(int(sys.argv[2]))
        sys.exit(0)
    unittest.main()
