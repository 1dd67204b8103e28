"""gpuscope's PyTorch hooks: `gpuscope trace` (steps and generate by default),
`--pytorch=ops|modules|memory[,shapes]` and `--cuda-memory-usage`.

`gpuscope trace` puts this file's folder first on PYTHONPATH and names what to record in
GPUSCOPE_PYTORCH ("steps,generate" by default, more with --pytorch=..., unset with
--pytorch=none); Python imports it at start-up (the `site` module's sitecustomize). It does
nothing until the program imports torch (it never imports torch itself), then hooks into
torch, with no change to the program, and records through NVTX (which gpuscope's collector
receives):

  ops      every operator call on every thread. gpuscope's own observer (gpuscope_torch_ops.cpp
           beside this file: a global RecordFunction callback, built on first use against this
           torch and cached, see _observer) hands the collector an interned name id, sequence
           number and handle per call, no text; the importer writes the ranges PyTorch's NVTX
           observer would have: one per call, "NAME, seq = N, op_id = M[, sizes = ...]";
           backward calls carry the sequence number of the forward operator that created them.
           Without a compiler (or GPUSCOPE_TORCH_OPS_ROUTE=nvtx) PyTorch's own NVTX observer,
           the one torch.autograd.profiler.emit_nvtx installs, records them as that text per
           call (costs more: docs/performance.md). ``shapes`` adds the input shapes
           (costs more).
  modules  every nn.Module call (its forward and hooks), as a range "nn.Module: PATH (CLASS)"
           (through the observer when it is loaded: a lookup and two ring writes per call; else NVTX):
           PATH is the module's path in its model ("layer1.0.conv1"; the outermost module
           called is its class name). Code compiled by torch.compile has no module ranges.
           The outermost module's range adds what a language model's decode step must read
           (docs/trace-schema.md, "Model bytes"): ", weight_bytes = N, weight_dtype = D"
           (its parameters and non-bool buffers, each tensor once, counted at its first
           call) and, when a KV cache is passed in, ", kv_bytes = N, kv_tokens = T" (a
           dynamic cache: its key/value tensors now, T positions per sequence) or
           ", kv_bytes = N, kv_static = 1" (a preallocated cache: its allocated tensors).
  memory   the allocator's events (history below).
  steps    a mark "gpuscope.step" after every optimizer.step() (one global optimizer step
           post-hook: one Python call and one NVTX mark per step; validation/step_marks_cost.py
           measures it). Nothing in a torch built without CUDA (no NVTX there).
  generate when transformers' generation code is imported (transformers.generation.utils, which
           imports torch itself): GenerationMixin.generate wrapped in a range "gpuscope.generate"
           (pushed at the call, popped at its return or exception), where the user's request
           starts (llm_sum's TTFT, docs/llm.md). Nothing else of transformers is touched:
           programs that never call generate() pay nothing.

GPUSCOPE_TORCH_MEMORY (set by --cuda-memory-usage and --pytorch=memory) adds, at exit, a file
torch-memory-PID.json in $GPUSCOPE_LOG_DIR that the importer reads (store/torch_memory_tables.hpp):
  segments every segment the caching allocator holds at exit (address, size, stream), and its own
           counters per device (torch.cuda.max_memory_reserved(), memory_reserved(),
           max_memory_allocated(), memory_allocated()): the trace tells PyTorch's cudaMalloc
           calls from other libraries' by these addresses. Costs nothing while the program runs.
  history  also every allocator event (alloc, free_requested, free_completed, segment_alloc,
           segment_free, ...: torch.cuda.memory._record_memory_history(context=None), from
           `import torch` on, up to GPUSCOPE_TORCH_MEMORY_ENTRIES events, the latest kept):
           tensors' memory over time. One record per allocator event (804 per resnet18 step;
           docs/performance.md).
The file is written by an atexit handler: a process that ends with os._exit() or a signal
writes none, and its segments count as memory outside PyTorch.

The program's own sitecustomize, if any, still runs (imported after this one). Child
processes inherit PYTHONPATH and GPUSCOPE_PYTORCH, so torchrun workers and multiprocessing
children are hooked too. Nothing here initialises CUDA.
"""
import os
import sys

_MARK_STEP = "gpuscope.step"  # core/pytorch_ranges.hpp reads these back
_GENERATE_RANGE = "gpuscope.generate"
_MODULE_PREFIX = "nn.Module: "
_GENERATION_MODULE = "transformers.generation.utils"  # defines GenerationMixin


def _chain_user_sitecustomize():
    """Imports the next sitecustomize on sys.path (the program's own), if there is one."""
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the program's own start-up code: report, do not stop the program
        print(f"gpuscope: warning: the program's sitecustomize failed: {e!r}", file=sys.stderr)


_OBSERVER = "gpuscope_torch_ops"  # the extension's module name and source file (.cpp)
_observer_state = {}  # "module": the loaded observer or None (NVTX route), decided once per process


def _note(text):
    print(f"gpuscope: {text}", file=sys.stderr, flush=True)


def _cache_dir():
    """$XDG_CACHE_HOME/gpuscope/torch-ops (else ~/.cache/gpuscope/torch-ops), where the observer
    is built and loaded from. gpuscope/ must be a folder of this user that no one else can write
    (owner, not a link, no group or other write bit: the calibration and peak caches share it,
    and gpuscope before this version created it 0755); torch-ops/ is private state (created 0700,
    checked for owner, mode 0700 and not a link: docs/CONVENTIONS.md #24). Raises OSError otherwise."""
    import stat
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    parent = os.path.join(root, "gpuscope")
    path = os.path.join(parent, "torch-ops")
    os.makedirs(parent, mode=0o700, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    for folder, bad in ((parent, 0o022), (path, 0o077)):
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & bad:
            who = "writable by others" if bad == 0o022 else "not private"
            raise OSError(f"{folder} is not this user's folder or is {who} (owner {st.st_uid}, mode "
                          f"{st.st_mode & 0o777:o}): remove it or set XDG_CACHE_HOME")
    return path


# The observer's compiler flags besides the standard, ABI and paths. -DNDEBUG as PyTorch's release
# builds: their headers' debug-only members (RecordFunction::inputs_valid_, never set by such a
# library) would otherwise fail inputs() on whatever byte lies there, and lose shapes at random.
_OBSERVER_FLAGS = ["-O2", "-shared", "-fPIC", "-w", "-DNDEBUG", "-DTORCH_API_INCLUDE_EXTENSION_H"]

# Tried first where the compiler takes it (x86-64): TLS descriptors, so that the callbacks' one
# thread_local read is a load from the thread pointer, not a __tls_get_addr call (glibc places a
# dlopen'ed module's small TLS in its static block when there is room, else falls back by itself).
# A compiler that refuses it builds without it.
_OBSERVER_TLS_FLAGS = ["-mtls-dialect=gnu2"] if os.uname().machine == "x86_64" else []


# The headers the observer compiles: the collector's (the ring it writes into), beside it in an
# installed gpuscope (lib/python/) and one folder up in the source tree (src/collect/), and its own
# name cache and table of known modules, beside it in both.
_OBSERVER_HEADERS = ("torch_ops_abi.hpp", "spsc_ring.hpp", "name_cache.hpp", "module_table.hpp")


def _observer_headers(source):
    """The paths of _OBSERVER_HEADERS for `source`; raises RuntimeError when one is missing."""
    here = os.path.dirname(source)
    paths = []
    for name in _OBSERVER_HEADERS:
        found = [p for p in (os.path.join(here, name), os.path.join(os.path.dirname(here), name)) if os.path.exists(p)]
        if not found:
            raise RuntimeError(f"gpuscope's {name} is missing beside {source}")
        paths.append(found[0])
    return paths


def _observer_key(torch, source):
    """What a built observer depends on: torch's version and C++ ABI, Python's version, the source,
    the headers it shares with the collector and the compiler flags."""
    import hashlib
    h = hashlib.sha256(" ".join(_OBSERVER_FLAGS + _OBSERVER_TLS_FLAGS).encode())
    for path in [source] + _observer_headers(source):
        with open(path, "rb") as f:
            h.update(f.read())
    digest = h.hexdigest()[:16]
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    version = str(getattr(torch, "__version__", "unknown")).replace("+", "_").replace("/", "_")
    return f"torch-{version}-cxx11abi{abi}-py{sys.version_info[0]}{sys.version_info[1]}-{digest}"


def _load_built(build_dir):
    """The observer module built earlier in build_dir, or None."""
    import importlib.machinery
    import importlib.util
    path = os.path.join(build_dir, _OBSERVER + ".so")
    if os.path.exists(path):
        loader = importlib.machinery.ExtensionFileLoader(_OBSERVER, path)
        spec = importlib.util.spec_from_file_location(_OBSERVER, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return module
    return None


def _cxx_standard(torch):
    """-std=c++20 for torch 2.13 and later (their ATen headers refuse older standards), else c++17."""
    import re
    m = re.match(r"(\d+)\.(\d+)", str(getattr(torch, "__version__", "")))
    return "-std=c++20" if m and (int(m.group(1)), int(m.group(2))) >= (2, 13) else "-std=c++17"


def _build_observer(torch, source, build_dir):
    """Builds the observer against this torch with the C++ compiler alone (torch's own include
    and library folders from torch.utils.cpp_extension, its C++ ABI; no ninja needed), one line
    while it builds and one when done; raises RuntimeError saying why it cannot."""
    import shutil
    import sysconfig
    import time
    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx) is None:
        raise RuntimeError(f"no C++ compiler ({cxx}) on PATH")
    from torch.utils import cpp_extension
    os.makedirs(build_dir, mode=0o700, exist_ok=True)
    target = os.path.join(build_dir, _OBSERVER + ".so")
    tmp = f"{target}.{os.getpid()}.tmp"
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    libs = cpp_extension.library_paths()
    cmd = [cxx, _cxx_standard(torch), f"-D_GLIBCXX_USE_CXX11_ABI={abi}"] + _OBSERVER_FLAGS
    headers = sorted({os.path.dirname(p) for p in _observer_headers(source)})
    cmd += [f"-I{d}" for d in headers + cpp_extension.include_paths() + [sysconfig.get_paths()["include"]]]
    cmd += [source, "-o", tmp] + [f"-L{d}" for d in libs] + [f"-Wl,-rpath,{d}" for d in libs]
    cmd += ["-lc10", "-ltorch_cpu"]
    _note(f"building the PyTorch operator observer for torch {torch.__version__} (once per torch version; "
          f"into {build_dir})...")
    start = time.monotonic()
    import subprocess
    for extra in ([_OBSERVER_TLS_FLAGS, []] if _OBSERVER_TLS_FLAGS else [[]]):
        r = subprocess.run(cmd[:1] + extra + cmd[1:], capture_output=True, text=True)
        if r.returncode == 0:
            break
    if r.returncode != 0:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the build failed: {cxx} exited with {r.returncode}: {last}")
    os.replace(tmp, target)  # whole or absent: a concurrent process never loads half a file
    _note(f"built the PyTorch operator observer in {time.monotonic() - start:.1f} s; later runs load it")
    return _load_built(build_dir)


def _observer(torch):
    """gpuscope's compiled observer attached to the collector, or None (the NVTX route; a
    one-line note says why, except when the route was asked for). Once per process."""
    if "module" in _observer_state:
        return _observer_state["module"]
    module = None
    collector = os.environ.get("CUDA_INJECTION64_PATH", "")  # unset: not under gpuscope, nothing to record into
    if collector and os.environ.get("GPUSCOPE_TORCH_OPS_ROUTE", "") != "nvtx":
        try:
            source = os.path.join(os.path.dirname(os.path.abspath(__file__)), _OBSERVER + ".cpp")
            build_dir = os.path.join(_cache_dir(), _observer_key(torch, source))
            module = _load_built(build_dir) or _build_observer(torch, source, build_dir)
            module.attach(collector)
        except Exception as e:  # no compiler, a failed build, an older collector: record through NVTX
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            _note(f"cannot use gpuscope's PyTorch operator observer ({first}); recording operators through "
                  f"PyTorch's NVTX observer instead (a text per call: costs more, docs/performance.md)")
            module = None
    _observer_state["module"] = module
    return module


def _median_ns_per(blocks, kinds):
    """{kind: median over `blocks` rounds of ns per unit}; kinds: {kind: (run, units)}: run()
    runs one block, units() says how many units it ran (called after it). Kinds alternate."""
    import statistics
    import time
    per = {k: [] for k in kinds}
    for _ in range(blocks):
        for kind, (run, units) in kinds.items():
            t0 = time.perf_counter_ns()
            run()
            elapsed = time.perf_counter_ns() - t0
            per[kind].append(elapsed / max(1, units()))
    return {k: statistics.median(v) for k, v in per.items()}


def _calibrate_ops(torch, observer, shapes, blocks=15, iterations=200):
    """ns the observer adds per RecordFunction call, on real dispatcher work: a small CPU autograd
    graph (forward operators, then backward nodes and the operators inside them, as a training step
    has) run with the callback installed (writing into the scratch sink) and removed, blocks
    alternating; the calls are counted by the sink. Median of blocks, ns per call. Called with the
    callback removed (_record_observer_cost), and leaves it removed."""
    a = torch.ones(8, requires_grad=True)
    b = torch.full((8,), 2.0)

    def graph():
        for _ in range(iterations):
            (a * b + a).sum().backward()
            a.grad = None
    calls = {}

    def with_callback():
        observer.install_ops(shapes)
        observer.scratch_mode(True)
        before = observer.scratch_count()
        try:
            graph()
        finally:
            observer.scratch_mode(False)
            observer.uninstall_ops()
        calls["n"] = (observer.scratch_count() - before) // 2  # a begin and an end per call

    def without():
        graph()
    graph()  # warm: autograd's buffers allocated
    with_callback()  # the names interned in the scratch sink
    ns = _median_ns_per(blocks, {"on": (with_callback, lambda: calls["n"]), "off": (without, lambda: calls["n"])})
    return max(0.0, ns["on"] - ns["off"]), calls["n"] / iterations


def _calibrate_modules(torch, observer, blocks=15, iterations=2000):
    """ns the nn.Module.__call__ wrapper adds per module call: the wrapper _enable_modules
    installs (made by _module_call_wrapper), its edges into the scratch sink, against the
    untraced __call__, on a Sequential of two Identity modules (3 module calls per iteration).
    Nothing is recorded: the installed wrapper is set aside during the blocks and put back."""
    from torch import nn
    from torch.nn.modules.module import Module
    current = Module.__call__
    original = getattr(current, "__wrapped__", current)
    wrapped = _module_call_wrapper(torch, original, lambda text: 1, observer.scratch_begin, observer.scratch_end,
                                   _fast_caller(observer, True))
    model = nn.Sequential(nn.Identity(), nn.Identity())
    x = torch.zeros(1)

    def run(call):
        def block():
            Module.__call__ = call
            try:
                for _ in range(iterations):
                    call(model, x)
            finally:
                Module.__call__ = current
        return block
    units = 3 * iterations
    ns = _median_ns_per(blocks, {"on": (run(wrapped), lambda: units), "off": (run(original), lambda: units)})
    return max(0.0, ns["on"] - ns["off"])


def _record_observer_cost(torch, observer, shapes, modules):
    """Measures what the observer adds per operator call and per module call, in this process,
    without recording anything, and stores it in the trace (meta tracer_torch_op_cost_ns,
    tracer_torch_module_cost_ns). About 0.2 s, at exit (atexit, once the program's threads are
    done: the callback is removed for every thread during the "off" blocks), not at `import
    torch`: the first backward pass starts the autograd engine's device threads, which asks the
    CUDA driver how many GPUs there are; a program that forks after importing torch must not
    meet an initialized driver because of gpuscope. A process that ends without running atexit
    handlers (os._exit, a signal) has no cost stored: the analyses then keep it in.
    The callback is removed for the whole calibration and put back after it: nothing the
    calibration runs (its tensors, its autograd graph) may reach the trace, where its backward nodes
    would mark an inference process as training and its operators would join op_sum."""
    observer.uninstall_ops()
    try:
        op_ns, per_iteration = _calibrate_ops(torch, observer, shapes)
        module_ns = _calibrate_modules(torch, observer) if modules else float("nan")
    finally:
        observer.install_ops(shapes)
    observer.cost(op_ns, module_ns, f"in-process at exit: median of 15 blocks of a CPU autograd graph "
                                    f"({per_iteration:.0f} RecordFunction calls, forward and backward) with the "
                                    f"callback (into a scratch sink) and without, torch {torch.__version__}"
                                    + ("; module: median of 15 blocks of 6000 calls through the wrapper and "
                                       "without" if modules else ""))


def _enable_ops(torch, shapes):
    observer = _observer(torch)
    if observer is not None:
        try:
            observer.install_ops(bool(shapes))
        except Exception as e:  # PyTorch refused the callback: the NVTX route
            _note(f"cannot use gpuscope's PyTorch operator observer ({e}); recording operators through PyTorch's "
                  f"NVTX observer instead")
            return _enable_ops_nvtx(torch, shapes)
        import atexit
        atexit.register(observer.uninstall_ops)

        def measure_cost():
            try:
                _record_observer_cost(torch, observer, bool(shapes), "modules" in _wanted())
            except Exception as e:  # the trace then says nothing of the cost: the analyses keep it in
                _note(f"warning: cannot measure the PyTorch observer's cost: {e!r}")
        atexit.register(measure_cost)  # runs before uninstall_ops (last registered, first run)
        return observer
    _enable_ops_nvtx(torch, shapes)


def _wanted():
    return {w.strip() for w in os.environ.get("GPUSCOPE_PYTORCH", "").split(",") if w.strip()}


def _enable_ops_nvtx(torch, shapes):
    # What torch.autograd.profiler.emit_nvtx.__enter__ does, without its
    # torch.cuda.synchronize() (which would initialise CUDA at `import torch`). The observer
    # is thread-local: PyTorch carries it to the autograd engine's threads; every Python
    # thread started later gets its own (threading.Thread._bootstrap_inner wrapped), so
    # operators on any thread are recorded.
    import threading
    from torch.autograd import profiler as ap
    config = ap.ProfilerConfig(ap.ProfilerState.NVTX, shapes, False, False, False, False, ap._ExperimentalConfig())

    def enable():
        ap._run_on_profiler_start()
        ap._enable_profiler(config, set())

    def disable():  # remove the observer (else PyTorch warns of a leaked callback handle)
        try:
            ap._disable_profiler()
        except Exception:
            pass

    enable()
    import atexit
    atexit.register(disable)
    bootstrap = getattr(threading.Thread, "_bootstrap_inner", None)
    if bootstrap is None:  # another Python: operators on later threads go unrecorded
        return

    def traced_bootstrap(self):
        try:
            enable()
        except Exception:  # already on for this thread, or torch refuses: run the thread anyway
            return bootstrap(self)
        try:
            return bootstrap(self)
        finally:
            disable()

    threading.Thread._bootstrap_inner = traced_bootstrap


def _enable_modules(torch):
    # Wraps nn.Module.__call__ rather than registering global forward hooks: any global hook
    # sends every module call down Module._call_impl's slow path (hook lists, try/finally,
    # result checks), several times the cost of one more Python frame.
    from torch.nn.modules.module import Module
    observer = _observer(torch)
    # label(text): what push takes for a range's text, made once per module: through the
    # observer the text's id (then one C call and one ring write per edge), else the text (NVTX).
    caller = None
    if observer is not None:
        label, push, pop = observer.intern, observer.module_begin, observer.end
        caller = _fast_caller(observer, False)
    else:
        nvtx = getattr(torch.cuda.nvtx, "_nvtx", None)  # the C functions behind range_push/pop: one frame less
        push = getattr(nvtx, "rangePushA", None) or torch.cuda.nvtx.range_push
        pop = getattr(nvtx, "rangePop", None) or torch.cuda.nvtx.range_pop

        def label(text):
            return text
    Module.__call__ = _module_call_wrapper(torch, Module.__call__, label, push, pop, caller)


def _fast_caller(observer, scratch):
    """(module_caller, remember) of the observer: a module's range recorded by one C call once the
    module is known; None for an observer without them (tests' stand-ins) and on a free-threaded
    Python running without its GIL (the C table of known modules, module_table.hpp, relies on the
    GIL): the Python path only."""
    make = getattr(observer, "module_caller", None)
    if make is None or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    return (lambda call, slow: make(call, slow, scratch), observer.remember)


def _module_call_wrapper(torch, call, label, push, pop, caller=None):
    """The nn.Module.__call__ that puts a range around each module call: push(label(text)) and
    pop() around call(self, ...). Inside torch.compile tracing (torch.compiler.is_compiling() is
    True) it only calls through, so compiled graphs keep no range calls and no graph breaks.
    With `caller` (_fast_caller: the observer route), a module whose range text is fixed is handed
    to the observer's table on its first call, and its later calls take one C call (the look-up,
    both edges and the call itself); a model's root, whose text is made per call, and the NVTX
    route stay here. Its __wrapped__ is `call`. _calibrate_modules times the same function with
    scratch edges."""
    import weakref
    is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
    # id(module) -> (weak reference to it, its range message's label, None or for a root module the
    # function that makes each call's message's label with the model's bytes), made on its first call. A plain
    # dict by id is cheaper per call than a WeakKeyDictionary (no weak reference made per
    # lookup); the reference tells a reused id of a dead module from the module itself, and
    # its callback drops the entry when the module dies (modules made per call stay bounded).
    messages = {}

    def forget(key):
        return lambda _ref: messages.pop(key, None)

    def name_tree(mod):  # a module not seen inside a known model: a new root, its tree named at once
        root = type(mod).__name__
        root_text = f"{_MODULE_PREFIX}{root} ({root})"  # named_modules() gives mod itself first, as ""
        for sub_name, sub in mod.named_modules():
            known = messages.get(id(sub))
            if known is None or known[0]() is not sub:
                text = f"{_MODULE_PREFIX}{sub_name or root} ({type(sub).__name__})"
                messages[id(sub)] = (weakref.ref(sub, forget(id(sub))), label(text), None)
        # The root's message also says what a decode step reads: its weights (counted now,
        # once per module object) and, per call, the KV cache passed in (_model_message).
        ref, plain, _ = messages[id(mod)]
        weights = _weight_fields(mod)  # "" for a module without weights: its plain message
        message = _model_message(root_text, weights, tensor) if weights else None
        entry = (ref, plain, (lambda args, kwargs: label(message(args, kwargs))) if message else None)
        messages[id(mod)] = entry
        return entry

    tensor = torch.Tensor

    remember = caller[1] if caller else None

    def slow(self, *args, **kwargs):
        known = messages.get(id(self))
        if known is None or known[0]() is not self:
            known = name_tree(self)
        if known[2] is None and remember is not None:
            remember(self, known[1])
        push(known[1] if known[2] is None else known[2](args, kwargs))
        try:
            return call(self, *args, **kwargs)
        finally:
            pop()
    fast = caller[0](call, slow) if caller else slow

    def traced_call(self, *args, **kwargs):
        if is_compiling():
            return call(self, *args, **kwargs)
        return fast(self, *args, **kwargs)

    traced_call.__wrapped__ = call
    return traced_call


# Keyword arguments that carry a KV cache (Hugging Face: past_key_values; hand-written loops).
_CACHE_KWARGS = ("past_key_values", "past_key_value", "past", "kv_cache", "cache", "layer_past", "caches")


def _weight_fields(mod):
    """", weight_bytes = N, weight_dtype = D" of a module: numel x element_size over its unique
    parameters (tied weights once) and its buffers but bool ones (causal masks, of which a step
    reads a slice); D is the dtype holding most of the bytes. "" when there are none or a tensor
    cannot say its size (lazy modules)."""
    try:
        total, by_dtype = 0, {}
        for t in mod.parameters():
            n = t.numel() * t.element_size()
            total += n
            by_dtype[t.dtype] = by_dtype.get(t.dtype, 0) + n
        for t in mod.buffers():
            if str(t.dtype) != "torch.bool":
                n = t.numel() * t.element_size()
                total += n
                by_dtype[t.dtype] = by_dtype.get(t.dtype, 0) + n
    except Exception:  # an uninitialised (lazy) parameter, a tensor subclass that refuses
        return ""
    if total <= 0:
        return ""
    dtype = str(max(by_dtype, key=by_dtype.get)).replace("torch.", "")
    return f", weight_bytes = {total}, weight_dtype = {dtype}"


def _is_static(obj):
    """A preallocated cache (transformers' StaticCache, HybridCache, SlidingWindowCache, their
    layers): its tensors have the maximum length from the start."""
    name = type(obj).__name__
    return "Static" in name or "Hybrid" in name or name.startswith("SlidingWindow")


def _cache_fields(obj, tensor, depth=0):
    """(bytes, tokens, static) of the key/value tensors of a KV cache, or None when `obj` is not
    one: transformers' Cache objects (.layers[i].keys/.values, or the older .key_cache and
    .value_cache lists; an EncoderDecoderCache's two caches) and legacy tuples of (key, value[, ...])
    tuples per layer. tokens: positions per sequence held (a key's dimension -2), None when unknown
    or static."""
    if obj is None or isinstance(obj, (tensor, bool, int, float, str, dict)) or depth > 2:
        return None
    if isinstance(obj, (tuple, list)):  # legacy: ((k, v), (k, v), ...), or a list of them
        if not obj or not all(isinstance(layer, (tuple, list)) and len(layer) >= 2 for layer in obj):
            return None
        total, tokens = 0, None
        for layer in obj:
            for t in layer:
                if not isinstance(t, tensor) or t.dim() < 3:
                    return None
                total += t.numel() * t.element_size()
            if tokens is None:
                tokens = layer[0].shape[-2]
        return total, tokens, False
    static = _is_static(obj)
    layers = getattr(obj, "layers", None)
    if (isinstance(layers, (list, tuple)) or type(layers).__name__ == "ModuleList") and len(layers) and \
            hasattr(layers[0], "keys"):  # transformers >= 4.54
        pairs = [(getattr(layer, "keys", None), getattr(layer, "values", None)) for layer in layers]
        static = static or any(_is_static(layer) for layer in layers[:1])
    elif isinstance(getattr(obj, "key_cache", None), list):  # transformers 4.36 - 4.53
        pairs = list(zip(obj.key_cache, obj.value_cache))
    else:
        parts = [getattr(obj, a, None) for a in ("self_attention_cache", "cross_attention_cache")]
        found = [f for f in (_cache_fields(p, tensor, depth + 1) for p in parts if p is not None) if f]
        if not found:
            return None
        return sum(f[0] for f in found), found[0][1], any(f[2] for f in found)
    total, tokens = 0, None
    for k, v in pairs:
        for t in (k, v):
            if isinstance(t, tensor):
                total += t.numel() * t.element_size()
        if tokens is None and isinstance(k, tensor) and k.dim() >= 2 and k.numel() > 0:
            tokens = k.shape[-2]
    return total, (None if static else (tokens or 0)), static


def _model_message(text, weights, tensor):
    """The root module's message maker: (args, kwargs) -> "nn.Module: PATH (CLASS)" + weights +
    the KV cache found in the call's arguments (docs/trace-schema.md, "Model bytes")."""
    base = text + weights

    def message(args, kwargs):
        found = None
        if kwargs:
            for key in _CACHE_KWARGS:
                v = kwargs.get(key)
                if v is not None:
                    found = _cache_fields(v, tensor)
                    if found:
                        break
        if found is None:
            for a in args:
                if not isinstance(a, tensor) and a is not None:
                    found = _cache_fields(a, tensor)
                    if found:
                        break
        if not found:
            return base
        total, tokens, static = found
        return f"{base}, kv_bytes = {total}, " + ("kv_static = 1" if static else f"kv_tokens = {tokens or 0}")
    return message


def _nvtx(torch):
    """(push, pop, mark): this torch's NVTX functions (torch._C._nvtx: torch.cuda.nvtx's, one frame
    less), or None in a torch built without CUDA, whose torch.cuda.nvtx functions raise."""
    c = getattr(getattr(torch, "_C", None), "_nvtx", None)
    if c is None or not all(hasattr(c, f) for f in ("rangePushA", "rangePop", "markA")):
        return None
    return c.rangePushA, c.rangePop, c.markA


def _enable_steps(torch):
    """Registers the global optimizer step post-hook that marks each step; returns its handle
    (handle.remove() takes it away: validation/step_marks_cost.py), None without NVTX."""
    nvtx = _nvtx(torch)
    if nvtx is None:
        return None
    import torch.optim.optimizer as optimizer  # a submodule torch's import does not bind as an attribute
    mark = nvtx[2]
    return optimizer.register_optimizer_step_post_hook(lambda opt, args, kwargs: mark(_MARK_STEP))


def _enable_generate(generation):
    """Wraps GenerationMixin.generate of transformers' module `generation` in a range
    "gpuscope.generate" (see the module's docstring). functools.wraps keeps its name, doc and
    signature (inspect follows __wrapped__); a subclass's own generate that calls super() is
    covered, one that never does is not. Returns the wrapper, None when there is nothing to wrap
    or no NVTX."""
    import functools
    mixin = getattr(generation, "GenerationMixin", None)
    generate = getattr(mixin, "generate", None)
    torch = sys.modules.get("torch")
    nvtx = _nvtx(torch) if torch is not None else None
    if generate is None or nvtx is None or getattr(generate, "_gpuscope", False):
        return None
    push, pop, _ = nvtx

    @functools.wraps(generate)
    def traced_generate(self, *args, **kwargs):
        push(_GENERATE_RANGE)
        try:
            return generate(self, *args, **kwargs)
        finally:
            pop()

    traced_generate._gpuscope = True
    mixin.generate = traced_generate
    return traced_generate


_HISTORY_ENTRIES = 2_000_000  # default of GPUSCOPE_TORCH_MEMORY_ENTRIES


def _history_entries():
    try:
        return max(1, int(os.environ.get("GPUSCOPE_TORCH_MEMORY_ENTRIES", _HISTORY_ENTRIES)))
    except ValueError:
        return _HISTORY_ENTRIES


def _memory_record(torch, history, entries):
    """What torch-memory-PID.json holds (see the module's docstring); None if CUDA never started."""
    import time
    cuda = torch.cuda
    if not cuda.is_initialized():
        return None
    cuda.synchronize()  # frees still pending on streams complete, so the counters are final
    snap = cuda.memory._snapshot()
    devices = []
    for d in range(cuda.device_count()):
        segments = [{"address": s["address"], "bytes": s["total_size"], "stream": s.get("stream", 0),
                     "pool": s.get("segment_type", "")} for s in snap.get("segments", []) if s.get("device") == d]
        stats = cuda.memory_stats(d)
        if not segments and not stats.get("reserved_bytes.all.peak", 0):
            continue
        dev = {"device": d, "max_reserved": cuda.max_memory_reserved(d), "reserved": cuda.memory_reserved(d),
               "max_allocated": cuda.max_memory_allocated(d), "allocated": cuda.memory_allocated(d),
               "max_requested": stats.get("requested_bytes.all.peak", 0),
               "requested": stats.get("requested_bytes.all.current", 0),
               "segments": segments}
        traces = snap.get("device_traces") or []
        if history and d < len(traces):
            dev["history"] = [[e.get("action", ""), e.get("addr", 0), e.get("size", 0), e.get("stream", 0),
                               e.get("time_us", 0)] for e in traces[d]]
        devices.append(dev)
    return {"format": "gpuscope torch memory 1", "pid": os.getpid(), "time_ns": time.time_ns(),
            "torch_version": getattr(torch, "__version__", ""), "history_max_entries": entries if history else None,
            "devices": devices}


def _enable_memory(torch, history):
    # History must start before the first allocation: at `import torch`, before CUDA starts.
    entries = _history_entries()
    if history:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=entries)
    log_dir = os.environ.get("GPUSCOPE_LOG_DIR", "")
    if not log_dir:
        return

    def write():
        import json
        try:
            record = _memory_record(torch, history, entries)
            if record is None:
                return
            path = os.path.join(log_dir, f"torch-memory-{os.getpid()}.json")
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(record, f, separators=(",", ":"))
            os.replace(tmp, path)  # whole or absent: the importer never reads half a file
        except Exception as e:  # at exit, in someone else's program: say so, never raise
            print(f"gpuscope: warning: cannot record PyTorch's allocator state: {e!r}", file=sys.stderr)
    import atexit
    atexit.register(write)


# What each hook did, for validation scripts run under gpuscope trace (sys.modules["sitecustomize"]):
# "steps": the handle of the optimizer step hook; "generate": the generate wrapper.
installed = {}


def _warn(what, library, e):  # an older or newer library without this hook: say so, run on
    print(f"gpuscope: warning: --pytorch={what}: cannot hook into {library}: {e!r}; the trace will have no {what}",
          file=sys.stderr)


def _install(torch, want):
    memory = {w for w in os.environ.get("GPUSCOPE_TORCH_MEMORY", "").split(",") if w}
    hooks = (("ops", lambda: _enable_ops(torch, "shapes" in want)), ("modules", lambda: _enable_modules(torch)),
             ("steps", lambda: _enable_steps(torch)), ("memory", lambda: _enable_memory(torch, "history" in memory)))
    for what, enable in hooks:
        if what == "memory" and not memory:
            continue
        if what != "memory" and what not in want:
            continue
        try:
            installed[what] = enable()
        except Exception as e:
            _warn(what, f"torch {getattr(torch, '__version__', '?')}", e)


def _install_generate(generation):
    try:
        installed["generate"] = _enable_generate(generation)
    except Exception as e:
        _warn("generate", "transformers", e)


def _after_import(callbacks):
    """Runs callbacks[name](module) right after module `name` is first imported (a finder first
    on sys.meta_path that wraps the loader of each spec it finds; it leaves once every name ran).
    A spec found but never executed (importlib.util.find_spec probing, as transformers'
    is_torch_available does before torch is imported) leaves the callback waiting. Costs one
    dictionary lookup per import until then; nothing is imported here."""
    import importlib.abc
    pending = {n: f for n, f in callbacks.items() if n not in sys.modules}
    for name, callback in callbacks.items():
        if name in sys.modules:
            callback(sys.modules[name])
    if not pending:
        return

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name not in pending:
                return None
            spec = None
            for finder in list(sys.meta_path):  # the finders that would have found it
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            loader_exec = spec.loader.exec_module

            def exec_module(module):
                loader_exec(module)
                callback = pending.pop(name, None)
                if not pending and self in sys.meta_path:
                    sys.meta_path.remove(self)
                if callback is not None:
                    callback(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Watch())


def _flush_call_sites_at_exit():
    """With --python-callsites or --python-sampling, an atexit handler (registered first, so it runs
    last) that stops the sampler and lets the collector resolve the Python frames of the program's
    last CUDA calls and samples while the interpreter still runs (gpuscope_python_flush, up to 2 s;
    ctypes releases the GIL for it). Only when the collector is already loaded (RTLD_NOLOAD): a
    program that never started CUDA loads nothing here."""
    if (os.environ.get("GPUSCOPE_PYTHON_CALLSITES", "none") in ("", "none")
            and os.environ.get("GPUSCOPE_PYTHON_SAMPLING", "0") in ("", "0")):
        return
    path = os.environ.get("CUDA_INJECTION64_PATH", "")
    if not path:
        return

    def flush():
        try:
            import ctypes
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)
            fn = getattr(lib, "gpuscope_python_flush", None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                fn.restype = None
                fn(2000)
        except OSError:  # not loaded: CUDA never started in this process
            pass
    import atexit
    atexit.register(flush)


def _main():
    _flush_call_sites_at_exit()
    want = {w.strip() for w in os.environ.get("GPUSCOPE_PYTORCH", "").split(",") if w.strip()}
    callbacks = {}
    if want or os.environ.get("GPUSCOPE_TORCH_MEMORY"):
        callbacks["torch"] = lambda torch: _install(torch, want)
    if "generate" in want:
        callbacks[_GENERATION_MODULE] = _install_generate
    _after_import(callbacks)
    _chain_user_sitecustomize()


if __name__ == "sitecustomize":  # Python's start-up; loaded under another name (tests, validation), only defines
    _main()
