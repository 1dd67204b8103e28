"""The collector's CPython frame walker inside a real interpreter (collect/python_frames.hpp).

Loads python_stack_probe (argv[1]) with ctypes and checks the stacks the walker takes at
known lines: nested calls, a thread, a generator, coroutines; the live-frame layout check;
interning (same site, same stack id) and resolution to file, line and function on another
thread that takes the GIL. Runs on every CPython it is given (3.11, 3.12, 3.13).
"""
import asyncio
import ctypes
import os
import sys
import threading

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
    print(f"python {sys.version.split()[0]}: {'FAILED' if FAILURES else 'ok'}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
