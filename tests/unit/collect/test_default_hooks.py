#!/usr/bin/env python3
"""The hooks every `gpuscope trace` installs by default (src/collect/python/sitecustomize.py,
GPUSCOPE_PYTORCH="steps,generate"), without torch or transformers: stand-in packages on disk (a
torch whose NVTX functions append to a list, an optimizer with global step post-hooks, a
transformers.generation.utils with GenerationMixin.generate), imported by a fresh Python that
starts with gpuscope's sitecustomize first on PYTHONPATH, as `gpuscope trace` runs the program:

  - nothing is imported at start-up (not torch, not transformers): the hooks wait for the import,
    and a probe (importlib.util.find_spec, as transformers' is_torch_available) does not use them up;
  - steps: one mark "gpuscope.step" per optimizer.step(), one hook, its handle kept
    (sitecustomize.installed["steps"]) and removable; torch.cuda is never touched (no CUDA
    initialised);
  - generate: GenerationMixin.generate wrapped in a push/pop range "gpuscope.generate", also
    when it raises, its name, docstring and signature kept; a subclass's generate that calls
    super() gets one range; importing transformers alone wraps nothing;
  - a hook that cannot install (ops on this stand-in) warns; the default ones still work;
  - GPUSCOPE_PYTORCH unset (--pytorch=none), "steps" alone, and a torch built without CUDA
    (no torch._C._nvtx): no hook, the program runs as without gpuscope, nothing on stderr.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SITE_DIR = os.path.normpath(os.path.join(HERE, "../../../src/collect/python"))

FAKES = {
    "torch/__init__.py": """
        import os
        import types
        LOG = []  # ("push" | "pop" | "mark", message), in call order
        CUDA_TOUCHED = []


        class _Nvtx:
            @staticmethod
            def rangePushA(message):
                LOG.append(["push", message])
                return 0

            @staticmethod
            def rangePop():
                LOG.append(["pop", None])
                return 0

            @staticmethod
            def markA(message):
                LOG.append(["mark", message])


        _C = types.SimpleNamespace()
        if not os.environ.get("FAKE_TORCH_WITHOUT_CUDA"):
            _C._nvtx = _Nvtx


        class _Cuda:  # any use of torch.cuda is recorded: the hooks must not need it
            def __getattr__(self, name):
                CUDA_TOUCHED.append(name)
                raise AttributeError(name)


        cuda = _Cuda()
        from . import optim  # noqa: E402,F401  (as torch's own __init__ does)
        """,
    "torch/optim/__init__.py": "from . import optimizer  # noqa: F401\n",
    "torch/optim/optimizer.py": """
        _global_post_hooks = {}


        class _Handle:
            def __init__(self, key):
                self.key = key

            def remove(self):
                _global_post_hooks.pop(self.key, None)


        def register_optimizer_step_post_hook(hook):
            key = max(_global_post_hooks, default=0) + 1
            _global_post_hooks[key] = hook
            return _Handle(key)


        class Optimizer:
            def step(self):
                for hook in list(_global_post_hooks.values()):
                    hook(self, (), {})
        """,
    "transformers/__init__.py": "",
    "transformers/generation/__init__.py": "",
    "transformers/generation/utils.py": """
        import torch


        class GenerationMixin:
            def generate(self, inputs=None, max_new_tokens=3, *, fail=False, **kwargs):
                \"\"\"Generates max_new_tokens tokens.\"\"\"
                torch.LOG.append(["generate", max_new_tokens])
                if fail:
                    raise ValueError("generation failed")
                return [inputs] * max_new_tokens

            def prepare_inputs_for_generation(self, x):
                return x
        """,
}

# What the traced program does; prints one JSON object of what it saw.
PROGRAM = """
import inspect, json, sys
seen = {"at_start": sorted(m for m in ("torch", "transformers", "transformers.generation.utils") if m in sys.modules)}
import importlib.util
importlib.util.find_spec("torch")  # a probe before the import (transformers' is_torch_available does this)
import torch
from torch.optim.optimizer import Optimizer, _global_post_hooks
seen["hooks"] = len(_global_post_hooks)
for _ in range(3):
    Optimizer().step()
seen["steps_log"] = list(torch.LOG)
site = sys.modules.get("sitecustomize")
handle = getattr(site, "installed", {}).get("steps")
seen["handle"] = handle is not None
if handle is not None:
    handle.remove()
    Optimizer().step()
    seen["after_remove"] = len(torch.LOG) - len(seen["steps_log"])
del torch.LOG[:]
import transformers
importlib.util.find_spec("transformers.generation.utils")
seen["generation_after_transformers"] = "transformers.generation.utils" in sys.modules
from transformers.generation.utils import GenerationMixin
gen = GenerationMixin.generate
seen["wrapped"] = hasattr(gen, "__wrapped__")
seen["name"], seen["doc"] = gen.__name__, gen.__doc__
seen["signature"] = str(inspect.signature(gen))
seen["other_method_plain"] = not hasattr(GenerationMixin.prepare_inputs_for_generation, "__wrapped__")


class Model(GenerationMixin):
    pass


class OwnGenerate(GenerationMixin):
    def generate(self, inputs=None, **kwargs):
        return super().generate(inputs, **kwargs)


seen["result"] = Model().generate("t", max_new_tokens=2)
seen["generate_log"] = list(torch.LOG)
del torch.LOG[:]
try:
    Model().generate("t", fail=True)
except ValueError as e:
    seen["raised"] = str(e)
seen["raise_log"] = list(torch.LOG)
del torch.LOG[:]
OwnGenerate().generate("u", max_new_tokens=1)
seen["subclass_log"] = list(torch.LOG)
seen["cuda_touched"] = torch.CUDA_TOUCHED
print(json.dumps(seen))
"""

STEP_MARK = ["mark", "gpuscope.step"]
PUSH, POP = ["push", "gpuscope.generate"], ["pop", None]


class DefaultHooks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        for rel, text in FAKES.items():
            path = os.path.join(cls.tmp.name, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_program(self, pytorch, **env):
        e = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSCOPE_", "FAKE_TORCH"))}
        e["PYTHONPATH"] = SITE_DIR + os.pathsep + self.tmp.name
        if pytorch is not None:
            e["GPUSCOPE_PYTORCH"] = pytorch
        e.update(env)
        r = subprocess.run([sys.executable, "-c", PROGRAM], env=e, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr

    def test_default_marks_steps_and_wraps_generate(self):
        seen, err = self.run_program("steps,generate")
        self.assertEqual(err, "")
        self.assertEqual(seen["at_start"], [], "nothing imported at start-up")
        self.assertEqual(seen["hooks"], 1)
        self.assertEqual(seen["steps_log"], [STEP_MARK] * 3, "one mark per optimizer step")
        self.assertTrue(seen["handle"])
        self.assertEqual(seen["after_remove"], 0, "the removed hook marks nothing")
        self.assertFalse(seen["generation_after_transformers"], "importing transformers imports no generation code")
        self.assertTrue(seen["wrapped"])
        self.assertEqual((seen["name"], seen["doc"]), ("generate", "Generates max_new_tokens tokens."))
        self.assertEqual(seen["signature"], "(self, inputs=None, max_new_tokens=3, *, fail=False, **kwargs)")
        self.assertTrue(seen["other_method_plain"], "only generate is wrapped")
        self.assertEqual(seen["result"], ["t", "t"])
        self.assertEqual(seen["generate_log"], [PUSH, ["generate", 2], POP])
        self.assertEqual(seen["raised"], "generation failed")
        self.assertEqual(seen["raise_log"], [PUSH, ["generate", 3], POP], "the range closes when generate raises")
        self.assertEqual(seen["subclass_log"], [PUSH, ["generate", 1], POP], "super().generate: one range")
        self.assertEqual(seen["cuda_touched"], [], "torch.cuda is never used: no CUDA initialised")

    def test_a_hook_that_cannot_install_warns_and_the_defaults_stay(self):
        seen, err = self.run_program("steps,generate,ops")  # the stand-in torch has no autograd profiler
        self.assertIn("gpuscope: warning: --pytorch=ops: cannot hook into torch", err)
        self.assertEqual(seen["steps_log"], [STEP_MARK] * 3)
        self.assertEqual(seen["generate_log"], [PUSH, ["generate", 2], POP])

    def test_none_installs_nothing(self):
        seen, err = self.run_program(None)
        self.assertEqual(err, "")
        self.assertEqual(seen["hooks"], 0)
        self.assertEqual(seen["steps_log"], [])
        self.assertFalse(seen["handle"])
        self.assertFalse(seen["wrapped"])
        self.assertEqual(seen["generate_log"], [["generate", 2]])

    def test_steps_alone_leave_generate_alone(self):
        seen, _ = self.run_program("steps")
        self.assertEqual(seen["steps_log"], [STEP_MARK] * 3)
        self.assertFalse(seen["wrapped"])

    def test_torch_without_cuda_gets_no_hook_and_runs(self):
        seen, err = self.run_program("steps,generate", FAKE_TORCH_WITHOUT_CUDA="1")
        self.assertEqual(err, "", "no warning: nothing to record without NVTX")
        self.assertEqual(seen["hooks"], 0)
        self.assertFalse(seen["wrapped"])
        self.assertEqual(seen["result"], ["t", "t"])
        self.assertEqual(seen["raised"], "generation failed")


if __name__ == "__main__":
    unittest.main()
