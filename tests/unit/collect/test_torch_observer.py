#!/usr/bin/env python3
"""gpuscope's PyTorch operator observer (src/collect/python/gpuscope_torch_ops.cpp, loaded by
sitecustomize.py for --pytorch=ops,modules), in two modes:

  --fallback (no torch needed; a stand-in torch whose NVTX observer records that it was enabled):
    - no C++ compiler on PATH: one note naming the missing compiler and the NVTX route, and the
      NVTX observer is enabled;
    - GPUSCOPE_TORCH_OPS_ROUTE=nvtx, or not under gpuscope (CUDA_INJECTION64_PATH unset): the NVTX
      route, nothing on stderr.
  --build (the real torch and a C++ compiler; exit 77 = skipped without them): a fake
    collector (fake_torch_collector.cpp, exporting the C ABI of collect/torch_ops_abi.hpp) stands
    in for libgpuscope_inject.so; a CPU model's forward and backward under GPUSCOPE_PYTORCH=
    ops,modules[,shapes]:
    - the first run builds the observer into the cache, saying so and how long it took; the
      second loads it and says nothing;
    - every operator, backward node and module call reaches the collector as ids (names interned
      once), balanced begins and ends per thread, seq and op_id as RecordFunction has them,
      shapes as PyTorch's NVTX observer writes them; the measured costs are handed over.
The build mode compiles the observer once against torch's headers: 15-60 s on 2 busy cores.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SITE_DIR = os.path.normpath(os.path.join(HERE, "../../../src/collect/python"))
SKIP = 77

FAKE_TORCH = {
    "torch/__init__.py": """
        import types
        __version__ = "0.0+fake"
        CALLS = []
        _C = types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True)
    """,
    "torch/autograd/__init__.py": "",
    "torch/utils/__init__.py": "",
    "torch/utils/cpp_extension.py": """
        def include_paths():
            return []


        def library_paths():
            return []
    """,
    "torch/autograd/profiler.py": """
        import torch


        class ProfilerState:
            NVTX = "nvtx"


        class _ExperimentalConfig:
            pass


        def ProfilerConfig(*args):
            return args


        def _run_on_profiler_start():
            pass


        def _enable_profiler(config, activities):
            torch.CALLS.append("nvtx_observer_on")


        def _disable_profiler():
            pass
    """,
}

FALLBACK_PROGRAM = "import json, torch; print(json.dumps(torch.CALLS))"

# The collector's calls are printed at exit, after the observer's calibration (an atexit handler
# registered when torch is imported, so run before this one, registered first).
MODEL_PROGRAM = """
import atexit, ctypes, json, os


def dump():
    lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
    lib.fake_torch_collector_dump.restype = ctypes.c_char_p
    print(lib.fake_torch_collector_dump().decode())


atexit.register(dump)
import sys
if os.environ.get("GIL_OFF"):  # as a free-threaded Python running without its GIL says it is
    sys._is_gil_enabled = lambda: False
import torch
ops = sys.modules["sitecustomize"].installed.get("ops")
if os.environ.get("PROFILER_STEP"):  # the observer sees the step alone
    ops.uninstall_ops()
model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
x = torch.randn(2, 8, requires_grad=True)


def step():
    if not os.environ.get("PROFILER_STEP"):
        return model(x).sum().backward()
    # User scopes too: each name a std::string of its own call (the address comes back with other
    # texts), one short, one longer than the observer's text slots (its hash map), one empty, twice each.
    from torch.autograd.profiler import record_function
    for _ in range(2):
        with record_function("gpuscope.test." + "long" * 40), record_function("gpuscope.short"), record_function(""):
            pass
    model(x).sum().backward()


if os.environ.get("PROFILER_STEP"):
    ops.install_ops(False)
step()
if os.environ.get("MODULE_CHECK"):
    # The step again (Linear and ReLU known now: through the observer's C caller), a module that
    # raises, twice (its range still ends), and that module's entry gone with it.
    class Boom(torch.nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    step()
    boom = Boom()
    for _ in range(2):
        try:
            boom(x)
        except ValueError:
            pass
    known = [ops.known_modules()]
    del boom
    known.append(ops.known_modules())
    print("KNOWN " + json.dumps(known))
if os.environ.get("PROFILER_STEP"):
    # The same step again, the observer removed, under torch.profiler (CPU): its calls name for name.
    from torch.profiler import ProfilerActivity, profile
    ops.uninstall_ops()
    model.zero_grad(set_to_none=True)
    x.grad = None
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    print("PROFILER " + json.dumps({e.key: e.count for e in prof.key_averages()}))
    # Every call torch.profiler recorded, before it merges calls by their timestamps.
    from torch.autograd.profiler_util import _filter_name
    raw = {}
    for event in prof.profiler.kineto_results.events():
        if not _filter_name(event.name()):
            raw[event.name()] = raw.get(event.name(), 0) + 1
    print("PROFILER_CALLS " + json.dumps(raw))
"""


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUSCOPE_", "CUDA_INJECTION", "XDG_CACHE")) and k != "CXX"}
    env.update(extra)
    return env


class Fallback(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        for rel, text in FAKE_TORCH.items():
            path = os.path.join(cls.tmp.name, "site", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))
        cls.empty_bin = os.path.join(cls.tmp.name, "bin")
        os.makedirs(cls.empty_bin)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_compiler_says_so_then_records_through_nvtx(self):
        calls, err = self.run_program(PATH=self.empty_bin, CUDA_INJECTION64_PATH="/nonexistent/libgpuscope_inject.so")
        self.assertEqual(err.strip().splitlines(), [
            "gpuscope: cannot use gpuscope's PyTorch operator observer (no C++ compiler (c++) on PATH); recording "
            "operators through PyTorch's NVTX observer instead (a text per call: costs more, docs/performance.md)"])
        self.assertEqual(calls, ["nvtx_observer_on"])

    def test_the_nvtx_route_asked_for_or_outside_gpuscope_is_silent(self):
        for env in ({"GPUSCOPE_TORCH_OPS_ROUTE": "nvtx", "CUDA_INJECTION64_PATH": "/nonexistent/x.so"}, {}):
            calls, err = self.run_program(PATH=self.empty_bin, **env)
            self.assertEqual(err, "", env)
            self.assertEqual(calls, ["nvtx_observer_on"], env)

    @unittest.skipUnless(os.uname().machine == "x86_64", "TLS descriptors are asked for on x86-64 only")
    def test_a_compiler_refusing_tls_descriptors_builds_without_them(self):
        # The first build asks for -mtls-dialect=gnu2; a compiler that refuses it is asked again
        # without it (this one fails that too: the note quotes the second build's last line).
        log = os.path.join(self.tmp.name, "cxx.log")
        cxx = os.path.join(self.tmp.name, "bin-cxx", "c++")
        os.makedirs(os.path.dirname(cxx), exist_ok=True)
        with open(cxx, "w") as f:
            f.write(f'#!/bin/sh\necho "$*" >> {log}\n'
                    'case "$*" in *-mtls-dialect=gnu2*) echo "c++: error: unrecognized option" >&2; exit 1;; esac\n'
                    'echo "c++: error: second try" >&2\nexit 1\n')
        os.chmod(cxx, 0o755)
        calls, err = self.run_program(PATH=os.path.dirname(cxx) + os.pathsep + self.empty_bin,
                                      CUDA_INJECTION64_PATH="/nonexistent/libgpuscope_inject.so",
                                      XDG_CACHE_HOME=os.path.join(self.tmp.name, "cache-tls"))
        with open(log) as f:
            tries = f.read().splitlines()
        self.assertEqual(["-mtls-dialect=gnu2" in t for t in tries], [True, False])
        self.assertIn("(the build failed: c++ exited with 1: c++: error: second try)", err)
        self.assertEqual(calls, ["nvtx_observer_on"])

    def test_the_cache_folder_is_this_users_and_closed_to_others(self):
        # A gpuscope/ folder created 0755 (gpuscope's own calibration cache does) is accepted:
        # the note is the missing compiler's, and torch-ops/ is created 0700.
        root = os.path.join(self.tmp.name, "cache-check")
        parent = os.path.join(root, "gpuscope")
        os.makedirs(parent)
        os.chmod(parent, 0o755)
        run = dict(PATH=self.empty_bin, CUDA_INJECTION64_PATH="/nonexistent/libgpuscope_inject.so",
                   XDG_CACHE_HOME=root)
        calls, err = self.run_program(**run)
        self.assertIn("(no C++ compiler (c++) on PATH)", err)
        self.assertEqual(os.stat(os.path.join(parent, "torch-ops")).st_mode & 0o777, 0o700)
        # Writable by others: refused, naming the folder and the fix; the NVTX route records.
        os.chmod(parent, 0o777)
        calls, err = self.run_program(**run)
        self.assertIn(f"{parent} is not this user's folder or is writable by others (owner {os.geteuid()}, mode 777)",
                      err)
        self.assertIn("remove it or set XDG_CACHE_HOME", err)
        self.assertEqual(calls, ["nvtx_observer_on"])
        # torch-ops/ a link to a folder someone else could fill: refused.
        os.chmod(parent, 0o755)
        os.rmdir(os.path.join(parent, "torch-ops"))
        elsewhere = os.path.join(root, "elsewhere")
        os.makedirs(elsewhere, mode=0o700)
        os.symlink(elsewhere, os.path.join(parent, "torch-ops"))
        calls, err = self.run_program(**run)
        self.assertIn(f"{os.path.join(parent, 'torch-ops')} is not this user's folder or is not private", err)
        self.assertEqual(calls, ["nvtx_observer_on"])

    def run_program(self, **env):
        env.setdefault("XDG_CACHE_HOME", os.path.join(self.tmp.name, "cache"))
        e = clean_env(PYTHONPATH=SITE_DIR + os.pathsep + os.path.join(self.tmp.name, "site"),
                      GPUSCOPE_PYTORCH="ops", **env)
        r = subprocess.run([sys.executable, "-c", FALLBACK_PROGRAM], env=e, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


class Build(unittest.TestCase):
    maxDiff = None
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.fake = os.path.join(cls.tmp.name, "libfake_collector.so")
        subprocess.run([os.environ.get("CXX", "c++"), "-std=c++17", "-shared", "-fPIC", "-O1", "-o", cls.fake,
                        f"-I{os.path.normpath(os.path.join(HERE, '../../../src'))}",
                        os.path.join(HERE, "fake_torch_collector.cpp")], check=True)
        cls.cache = os.path.join(cls.tmp.name, "cache")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_model(self, pytorch, **env):
        e = clean_env(PYTHONPATH=SITE_DIR, GPUSCOPE_PYTORCH=pytorch, CUDA_INJECTION64_PATH=self.fake,
                      XDG_CACHE_HOME=self.cache, **env)
        r = subprocess.run([sys.executable, "-c", MODEL_PROGRAM], env=e, capture_output=True, text=True, timeout=900)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        seen = json.loads(lines[-1])
        for line in lines:
            for key in ("PROFILER", "PROFILER_CALLS", "KNOWN"):
                if line.startswith(key + " "):
                    seen[key.lower()] = json.loads(line[len(key) + 1:])
        return seen, r.stderr

    def test_1_first_run_builds_and_records_ids(self):
        seen, err = self.run_model("ops,modules")
        self.assertIn("gpuscope: building the PyTorch operator observer for torch", err)
        self.assertRegex(err, r"gpuscope: built the PyTorch operator observer in [0-9.]+ s; later runs load it")
        self.assertNotIn("cannot use", err)
        names, events = seen["names"], seen["events"]
        self.assertEqual(len(names), len(set(names)), "each name interned once")
        begins = [e for e in events if e[1] in (1, 3)]
        ends = [e for e in events if e[1] == 2]
        self.assertEqual(len(begins), len(ends))
        depth = {}
        for tid, kind, *_ in events:  # properly nested per thread
            depth[tid] = depth.get(tid, 0) + (-1 if kind == 2 else 1)
            self.assertGreaterEqual(depth[tid], 0)
        self.assertEqual(set(depth.values()), {0})
        op_names = [names[e[2] - 1] for e in events if e[1] == 1]
        module_names = [names[e[2] - 1] for e in events if e[1] == 3]
        self.assertIn("aten::linear", op_names)
        self.assertTrue(any("Backward" in n for n in op_names), op_names)
        self.assertEqual(module_names, ["nn.Module: Sequential (Sequential), weight_bytes = 144, weight_dtype = float32",
                                        "nn.Module: 0 (Linear)",
                                        "nn.Module: 1 (ReLU)"])
        linear = next(e for e in events if e[1] == 1 and names[e[2] - 1] == "aten::linear")
        self.assertGreaterEqual(linear[3], 0, "a forward operator has its sequence number")
        self.assertGreater(linear[4], 0, "every call has its id (op_id)")
        self.assertEqual(linear[5], 0, "no shapes unless asked")
        op_ns, module_ns, method = seen["cost"]
        self.assertGreaterEqual(op_ns, 0)
        self.assertGreaterEqual(module_ns, 0)
        self.assertIn("RecordFunction", method)

    def test_3_every_call_named_as_torch_profiler_names_it(self):
        # Operator and backward-node names come through the observer's per-thread name table
        # (addresses reused by other texts among them): the step's calls, name for name, as
        # torch.profiler counts the same step.
        seen, _ = self.run_model("ops", PROFILER_STEP="1")
        names = seen["names"]
        every = {}
        for _, kind, name_id, *_ in seen["events"]:
            if kind == 1:
                every[names[name_id - 1]] = every.get(names[name_id - 1], 0) + 1
        self.assertTrue(any("evaluate_function" in n for n in every), every)
        self.assertEqual(every.get("gpuscope.short"), 2, every)
        self.assertEqual(every.get(""), 2, every)
        self.assertEqual(every.get("gpuscope.test." + "long" * 40), 2, every)
        # Every call torch.profiler recorded, count for count, and the names its table shows. The
        # table's counts are not compared: it merges a call with its redispatch by their
        # timestamps (EventList._remove_dup_nodes on a tree built from whole microseconds in
        # torch 1.13), so a loaded machine both undoes real pairs (aten::sum 3 for 2) and makes
        # false ones (two aten::resolve_conj in one microsecond, 6 for 7).
        self.assertEqual(every, seen["profiler_calls"])
        self.assertEqual(sorted(every), sorted(seen["profiler"]))
        ids = [e[4] for e in seen["events"] if e[1] == 1]
        self.assertEqual(len(ids), len(set(ids)), "every call has its own op_id")

    def test_4_known_modules_take_the_c_caller_and_ranges_stay_balanced(self):
        seen, _ = self.run_model("ops,modules", MODULE_CHECK="1")
        names, events = seen["names"], seen["events"]
        module_names = [names[e[2] - 1] for e in events if e[1] == 3]
        model = ["nn.Module: Sequential (Sequential), weight_bytes = 144, weight_dtype = float32",
                 "nn.Module: 0 (Linear)", "nn.Module: 1 (ReLU)"]
        self.assertEqual(module_names, model + model + ["nn.Module: Boom (Boom)"] * 2)
        depth = {}
        for tid, kind, *_ in events:
            depth[tid] = depth.get(tid, 0) + (-1 if kind == 2 else 1)
            self.assertGreaterEqual(depth[tid], 0)
        self.assertEqual(set(depth.values()), {0}, "every range ends, the raising module's too")
        # Linear, ReLU and Boom known (the root's text is made per call: never), Boom gone with it.
        self.assertEqual(seen["known"], [3, 2])

    def test_5_without_the_gil_modules_take_the_python_path(self):
        # The C table of known modules relies on the GIL: without it every module call is named
        # and recorded in Python, with the same ranges.
        seen, _ = self.run_model("ops,modules", MODULE_CHECK="1", GIL_OFF="1")
        names, events = seen["names"], seen["events"]
        model = ["nn.Module: Sequential (Sequential), weight_bytes = 144, weight_dtype = float32",
                 "nn.Module: 0 (Linear)", "nn.Module: 1 (ReLU)"]
        self.assertEqual([names[e[2] - 1] for e in events if e[1] == 3],
                         model + model + ["nn.Module: Boom (Boom)"] * 2)
        self.assertEqual(seen["known"], [0, 0])

    def test_2_later_runs_load_the_cached_observer_and_shapes(self):
        seen, err = self.run_model("ops,shapes")
        self.assertNotIn("building", err)
        self.assertNotIn("cannot use", err)
        names, events = seen["names"], seen["events"]
        # Shapes as PyTorch's NVTX observer writes them, on every call: the observer is built with
        # NDEBUG as torch is, so inputs() never fails on the debug-only inputs_valid_ byte (which
        # lost the shapes of calls at random, aten::linear and aten::t among them).
        transpose = [names[e[5] - 1] for e in events if e[1] == 1 and names[e[2] - 1] == "aten::t" and e[5]]
        self.assertEqual(transpose[0], "[[4, 8]]", "the forward's weight.t()")
        linear = [names[e[5] - 1] for e in events if e[1] == 1 and names[e[2] - 1] == "aten::linear"]
        self.assertEqual(linear, ["[[2, 8], [4, 8], [4]]"])
        self.assertTrue(all(e[5] for e in events if e[1] == 1), "every call has its shapes")
        self.assertEqual(sum(e[1] == 1 for e in events), sum(e[1] == 2 for e in events))
        self.assertFalse(any(e[1] == 3 for e in seen["events"]), "no module ranges unless asked")


def have_torch_toolchain():
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        return False
    r = subprocess.run([sys.executable, "-c", "import torch.utils.cpp_extension"], env=clean_env(),
                       capture_output=True)
    return r.returncode == 0


if __name__ == "__main__":
    mode = sys.argv.pop(1) if len(sys.argv) > 1 and sys.argv[1].startswith("--") else "--fallback"
    if mode == "--build" and not have_torch_toolchain():
        print("skipped: needs torch and a C++ compiler")
        sys.exit(SKIP)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Build if mode == "--build" else Fallback)
    sys.exit(0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1)
