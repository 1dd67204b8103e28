"""The collector's CPython frame walker inside a real interpreter (collect/python_frames.hpp).

Loads python_stack_probe (argv[1]) with ctypes and checks the stacks the walker takes at
known lines: nested calls, a thread, a generator, coroutines; the live-frame layout check;
interning (same site, same stack id) and resolution to file, line and function on another
thread that takes the GIL. Runs on every CPython it is given (3.11, 3.12, 3.13).
"""
import asyncio
import ctypes
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time

PROBE = sys.argv[1]
ME = os.path.abspath(__file__)
LINES = {}
with open(ME) as source:
    for number, text in enumerate(source, start=1):
        if "# @" in text:
            LINES[text.split("# @")[1].strip()] = number

gil_held = ctypes.PyDLL(PROBE)      # calls keep the GIL
gil_released = ctypes.CDLL(PROBE)   # calls release it, as PyTorch's CUDA calls do
FAILURES = []


def check(condition, what):
    if not condition:
        FAILURES.append(what)
        print("FAIL:", what)


def probe():
    buffer = ctypes.create_string_buffer(1 << 16)
    count = gil_released.gpuscope_probe_stack(buffer, len(buffer))  # @probe
    lines = buffer.value.decode().splitlines()
    frames = []
    for line in lines[1:]:
        file, number, first, function = line.rsplit(":", 3)
        frames.append((file, int(number), int(first), function))
    check(count == len(frames), f"{count} frames walked, {len(frames)} resolved")
    if not frames:
        return int(lines[0]), frames
    check(frames[0][1:] == (LINES["probe"], LINES["probe"] - 2, "probe"), f"innermost frame {frames[0]}")
    return int(lines[0]), frames[1:]


def ours(frames):
    """The frames of this file, as (line, function), innermost first."""
    return [(line, function) for file, line, _, function in frames if file == ME]


def leaf():
    return probe()  # @leaf


def middle():
    return leaf()  # @middle


def outer():
    return middle()  # @outer


def test_nested():
    stack_id, frames = outer()  # @test_nested
    want = [(LINES["leaf"], "leaf"), (LINES["middle"], "middle"), (LINES["outer"], "outer"),
            (LINES["test_nested"], "test_nested")]
    check(ours(frames)[:4] == want, f"nested: {ours(frames)[:4]} != {want}")
    check(frames[0][2] == LINES["leaf"] - 1, f"leaf's first line {frames[0][2]}")
    check(ours(frames)[-1][1] == "<module>", f"outermost {ours(frames)[-1]}")
    again, _ = outer()  # @test_nested_again
    check(again != stack_id, "a different caller line is a different stack")
    repeat = [outer()[0] for _ in range(3)]  # @test_nested_repeat
    check(len(set(repeat)) == 1 and repeat[0] != 0, f"same site, same id: {repeat}")


class Loader:
    def next_batch(self):
        return probe()  # @method


def test_method_qualname():
    _, frames = Loader().next_batch()  # @test_method
    check(ours(frames)[:2] == [(LINES["method"], "Loader.next_batch"), (LINES["test_method"], "test_method_qualname")],
          f"method: {ours(frames)[:2]}")


def test_thread():
    result = {}

    def worker():
        result["stack"] = leaf()  # @worker

    thread = threading.Thread(target=worker, name="probe-worker")
    thread.start()
    thread.join()
    _, frames = result["stack"]
    got = ours(frames)
    check(got[:2] == [(LINES["leaf"], "leaf"), (LINES["worker"], "test_thread.<locals>.worker")],
          f"thread: {got[:2]}")
    check(all(function != "test_thread" for _, function in got), "a thread's stack holds none of its starter's")
    check(frames[-1][3] == "Thread._bootstrap", f"thread's outermost frame {frames[-1]}")


def numbers():
    yield probe()  # @generator
    yield probe()  # @generator_second


def test_generator():
    gen = numbers()
    _, first = next(gen)  # @test_generator
    _, second = next(gen)  # @test_generator_second
    check(ours(first)[:2] == [(LINES["generator"], "numbers"), (LINES["test_generator"], "test_generator")],
          f"generator: {ours(first)[:2]}")
    check(ours(second)[:2] == [(LINES["generator_second"], "numbers"),
                               (LINES["test_generator_second"], "test_generator")],
          f"generator resumed: {ours(second)[:2]}")


async def fetch():
    await asyncio.sleep(0)
    return probe()  # @coroutine


async def step():
    return await fetch()  # @awaiter


def test_coroutine():
    _, frames = asyncio.run(step())
    got = ours(frames)
    check(got[:2] == [(LINES["coroutine"], "fetch"), (LINES["awaiter"], "step")], f"coroutine: {got[:2]}")
    check(any(file.endswith(os.path.join("asyncio", "events.py")) for file, _, _, _ in frames),
          "a coroutine's stack goes through the event loop")


def read_log(path):
    """Strings, PyFrameRecords and PyStackRecords of an event log (core/event_log_format.hpp)."""
    strings, frames, stacks, losses = {}, {}, {}, {}
    data = open(path, "rb").read()
    offset = struct.unpack_from("<I", data, 12)[0]  # FileHeader.header_size
    while offset + 8 <= len(data):
        kind, _, size = struct.unpack_from("<HHI", data, offset)
        payload = data[offset + 8:offset + 8 + size]
        offset += 8 + size
        if kind == 1:  # StringRecord
            strings[struct.unpack_from("<Q", payload)[0]] = payload[8:].decode()
        elif kind == 26:  # PyFrameRecord
            frame_id, line, first_line, _, file, function = struct.unpack_from("<IiiIQQ", payload)
            frames[frame_id] = (strings[file], line, strings[function])
        elif kind == 27:  # PyStackRecord
            stack_id, parent, frame, depth = struct.unpack_from("<IIII", payload)
            stacks[stack_id] = (parent, frame, depth)
        elif kind == 14:  # DataLossRecord
            _, count, what = struct.unpack_from("<QQQ", payload)
            losses[strings[what]] = losses.get(strings[what], 0) + count
    return frames, stacks, losses


def site_sync():
    return gil_released.gpuscope_probe_sites_take()  # @site_sync


def site_copy():
    return gil_released.gpuscope_probe_sites_take()  # @site_copy


def test_callsite_log():
    """The collector's path: take on this thread, check and resolve on the resolver thread."""
    path = os.path.join(tempfile.mkdtemp(), "sites.gslog")
    check(gil_released.gpuscope_probe_sites_open(path.encode()) == 1, "call sites on in a Python process")
    deadline = time.monotonic() + 5
    first = 0
    while first == 0 and time.monotonic() < deadline:  # until the resolver checked the layout
        time.sleep(0.01)
        first = site_sync()
    check(first != 0, "the resolver thread checked the layout on a live frame")
    ids = []
    for _ in range(2):
        ids.append(site_sync())  # @sites
        ids.append(site_copy())  # @sites_copy
    check(ids[0] == ids[2] and ids[1] == ids[3] and ids[0] != ids[1], f"stack ids {ids}")
    gil_released.gpuscope_probe_sites_flush(0)
    time.sleep(0.5)  # the resolver takes the GIL while this thread sleeps
    gil_released.gpuscope_probe_sites_flush(1)
    frames, stacks, losses = read_log(path)
    check(losses.get("py_frames_unresolved", 0) == 0, f"losses {losses}")

    def chain(stack_id):
        out = []
        while stack_id:
            parent, frame, _ = stacks[stack_id]
            file, line, function = frames.get(frame, ("?", -1, "?"))
            if file == ME:
                out.append((line, function))
            stack_id = parent
        return out

    check(chain(ids[0])[:2] == [(LINES["site_sync"], "site_sync"), (LINES["sites"], "test_callsite_log")],
          f"sync site {chain(ids[0])[:2]}")
    check(chain(ids[1])[:2] == [(LINES["site_copy"], "site_copy"), (LINES["sites_copy"], "test_callsite_log")],
          f"copy site {chain(ids[1])[:2]}")


# A script whose last calls are at module level and whose frames are resolved only at exit
# (as gpuscope's atexit flush does): its <module> code object is freed when the body ends, so
# the collector must have kept it alive (the resolver does it while the calling thread, which
# released the GIL, waits). Before: 3 frames unresolved, or named from another code object.
MODULE_END = """
import atexit, ctypes, sys, time
sys.path.insert(0, {here!r})
lib = ctypes.CDLL({probe!r})
lib.gpuscope_probe_sites_open({log!r}.encode())
def take():
    return lib.gpuscope_probe_sites_take()
x = 0
while x == 0:  # until the resolver checked the layout
    time.sleep(0.01)
    x = take()
def flush():
    lib.gpuscope_probe_sites_flush(0)
    time.sleep(0.3)
    lib.gpuscope_probe_sites_flush(1)
atexit.register(flush)
for i in range(5):
    take()  # @module_loop
take()  # @module_last
"""


def test_module_end():
    import subprocess
    folder = tempfile.mkdtemp()
    log = os.path.join(folder, "sites.gslog")
    script = os.path.join(folder, "module_end.py")
    text = MODULE_END.format(here=os.path.dirname(ME), probe=PROBE, log=log)
    with open(script, "w") as f:
        f.write(text)
    want = {number for number, line in enumerate(text.splitlines(), 1) if "# @module_" in line}
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"module_end.py ran: {r.stderr[-500:]}")
    frames, _, losses = read_log(log)
    check(losses.get("py_frames_unresolved", 0) == 0, f"module end: losses {losses}")
    lines = {line for file, line, function in frames.values() if file == script and function == "<module>"}
    check(want <= lines, f"module-level call sites at lines {sorted(want)} resolved (got {sorted(lines)})")


def read_samples(path):
    """PySampleRecords of an event log: (ts_ns, tid, stack_id, flags), in log order."""
    samples = []
    data = open(path, "rb").read()
    offset = struct.unpack_from("<I", data, 12)[0]
    while offset + 8 <= len(data):
        kind, _, size = struct.unpack_from("<HHI", data, offset)
        if kind == 28:  # PySampleRecord
            samples.append(struct.unpack_from("<QIIB", data, offset + 8))
        offset += 8 + size
    return samples


def spin(stop):
    x = 0
    while not stop.is_set():
        for _ in range(20000):
            x += 1  # @spin
    return x


def nap(seconds):
    time.sleep(seconds)  # @nap


def test_sampling():
    """The sampler thread (--python-sampling): every Python thread's stack read without the GIL,
    a spinning thread at its loop (holding the GIL, on a CPU) and a sleeping one at its sleep."""
    path = os.path.join(tempfile.mkdtemp(), "samples.gslog")
    check(gil_released.gpuscope_probe_sampling_open(path.encode(), 1000) == 1, "sampling on in a Python process")
    stop = threading.Event()
    spinner = threading.Thread(target=spin, args=(stop,))
    spinner.start()
    gil_released.gpuscope_probe_monotonic_ns.restype = ctypes.c_uint64
    t0 = gil_released.gpuscope_probe_monotonic_ns()
    nap(1.0)
    t1 = gil_released.gpuscope_probe_monotonic_ns()
    gil_released.gpuscope_probe_sampling_pause(1)  # paused: no sample until resumed
    time.sleep(0.02)  # a tick under way ends
    t2 = gil_released.gpuscope_probe_monotonic_ns()
    nap(0.3)
    t3 = gil_released.gpuscope_probe_monotonic_ns()
    gil_released.gpuscope_probe_sampling_pause(0)
    nap(0.2)
    t4 = gil_released.gpuscope_probe_monotonic_ns()
    stop.set()
    spinner.join()
    gil_released.gpuscope_probe_sampling_close()
    frames, stacks, losses = read_log(path)
    samples = read_samples(path)

    def innermost_ours(stack_id):
        while stack_id:
            parent, frame, _ = stacks[stack_id]
            file, line, function = frames.get(frame, ("?", -1, "?"))
            if file == ME:
                return line, function
            stack_id = parent
        return None

    main_tid, spin_tid = threading.get_native_id(), spinner.native_id
    # Inside the nap, after the resolver's checks (at most a few of its 100 ms periods).
    inside = [s for s in samples if t0 + 300_000_000 <= s[0] <= t1]
    by_thread = {tid: [s for s in inside if s[1] == tid] for tid in (main_tid, spin_tid)}
    print(f"  sampling: {len(samples)} samples, {len(inside)} inside the nap: "
          f"main {len(by_thread[main_tid])}, spinner {len(by_thread[spin_tid])}; losses {losses}")
    check(all(len(v) >= 50 for v in by_thread.values()), f"samples per thread {[len(v) for v in by_thread.values()]}")
    check(all(a[0] <= b[0] for a, b in zip(samples, samples[1:])), "sample times never go back")
    naps = [innermost_ours(s[2]) for s in by_thread[main_tid]]
    at_nap = sum(x == (LINES["nap"], "nap") for x in naps)
    check(at_nap >= 0.9 * len(naps), f"sleeping thread at nap:{LINES['nap']} in {at_nap} of {len(naps)}: {naps[:5]}")
    spins = [innermost_ours(s[2]) for s in by_thread[spin_tid]]
    in_spin = sum(x is not None and x[1] == "spin" for x in spins)
    check(in_spin >= 0.9 * len(spins), f"spinning thread in spin() in {in_spin} of {len(spins)}: {spins[:5]}")
    loop = {(LINES["spin"] - 1, "spin"), (LINES["spin"], "spin")}  # the for line and its body
    at_loop = sum(x in loop for x in spins)
    check(at_loop >= 0.9 * len(spins), f"spinning thread at its loop's lines in {at_loop} of {len(spins)}")
    # Flags: the sleeper neither holds the GIL nor runs; the spinner holds it (the only runnable
    # Python thread) and is running or runnable (state R).
    flag = lambda rows, bit: sum(1 for s in rows if s[3] & bit) / max(1, len(rows))
    check(flag(by_thread[main_tid], 1) <= 0.05, f"sleeping thread holds the GIL in {flag(by_thread[main_tid], 1):.0%}")
    check(flag(by_thread[main_tid], 2) <= 0.05, f"sleeping thread on a CPU in {flag(by_thread[main_tid], 2):.0%}")
    check(flag(by_thread[spin_tid], 1) >= 0.8, f"spinning thread holds the GIL in {flag(by_thread[spin_tid], 1):.0%}")
    check(flag(by_thread[spin_tid], 2) >= 0.8, f"spinning thread on a CPU in {flag(by_thread[spin_tid], 2):.0%}")
    paused = [s for s in samples if t2 <= s[0] <= t3]
    resumed = [s for s in samples if t3 <= s[0] <= t4 and s[1] == main_tid]
    check(not paused and len(resumed) >= 50, f"paused: {len(paused)} samples (want 0); resumed: {len(resumed)}")
    torn = losses.get("py_stacks_torn", 0)
    check(torn <= 0.01 * max(1, len(samples)), f"{torn} torn of {len(samples)}")
    check(losses.get("py_frames_unresolved", 0) == 0, f"sampling: losses {losses}")


def test_sampling_churn():
    """The sampler at 10 kHz on a process that creates and drops code objects and threads all the
    time (python_sampling_churn.py, in a child process so that a crash is a failure, not the end):
    torn reads meet garbage addresses there. Once stopped before the end, once left running
    while the interpreter finalizes."""
    churn = os.path.join(os.path.dirname(ME), "python_sampling_churn.py")
    for mode in ("close", "exit", "close"):
        path = os.path.join(tempfile.mkdtemp(), "churn.gslog")
        done = subprocess.run([sys.executable, churn, PROBE, "10000", "2", mode, path], capture_output=True,
                              text=True, timeout=50)
        check(done.returncode == 0 and "CHURN ok" in done.stdout,
              f"churn ({mode}): exit {done.returncode}: {(done.stderr or done.stdout)[-400:]}")
        if mode == "close" and done.returncode == 0:
            samples = read_samples(path)
            torn = read_log(path)[2].get("py_stacks_torn", 0)
            print(f"  churn: {len(samples)} samples, {torn} torn")
            check(len(samples) >= 1000, f"churn: {len(samples)} samples in 2 s at 10 kHz")
            # A torn walk is tried once more from a fresh read of the thread's state: even here,
            # where frames change all the time, torn stacks stay far under 1 %.
            check(torn <= 0.01 * len(samples), f"churn: {torn} torn of {len(samples)} samples")


def main():
    state = gil_held.gpuscope_probe_state()
    if state == 1:  # unsupported: the note says why
        note = ctypes.create_string_buffer(512)
        gil_held.gpuscope_probe_note(note, len(note))
        print("SKIP:", note.value.decode())
        return 0
    check(state == 2, f"walker state {state} before the check (2: unverified)")
    check(probe()[0] == 0, "no stack before the live-frame check")
    check(gil_held.gpuscope_probe_verify() == 1, "layout check on a live frame")
    check(gil_held.gpuscope_probe_state() == 3, "ready after the check")
    test_nested()
    test_method_qualname()
    test_thread()
    test_generator()
    test_coroutine()
    test_callsite_log()
    test_module_end()
    test_sampling()
    test_sampling_churn()
    print(f"python {sys.version.split()[0]}: {'FAILED' if FAILURES else 'ok'}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
