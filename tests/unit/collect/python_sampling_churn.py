"""A Python process that churns while gpuscope's sampler reads it (test_python_stacks.py's
test_sampling_churn): six threads compile, run and drop new code objects and generators, one
starts and joins short-lived threads, all while the sampler reads every thread's frames at
RATE per second without the GIL. Torn reads meet garbage addresses here; the sampler must
count them, never crash. MODE 'close' stops the sampler before the end; 'exit' leaves it
running while the interpreter finalizes.

Usage: python_sampling_churn.py PROBE RATE SECONDS MODE LOG. Prints ``CHURN ok``.
"""
import ctypes
import gc
import sys
import threading
import time

probe, rate, seconds, mode, log = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
lib = ctypes.CDLL(probe)
if lib.gpuscope_probe_sampling_open(log.encode(), rate) != 1:
    sys.exit("CHURN: the sampler did not start")
stop = threading.Event()


def churn(k):
    i = 0
    while not stop.is_set():
        source = f"def f{i}(x):\n    y = x\n    for j in range(50):\n        y += j * {k}\n    return y\nr = f{i}({i})\n"
        scope = {}
        exec(compile(source, f"<churn{k}_{i}>", "exec"), scope)
        del scope
        sum(x * x for x in range(100))
        i += 1
        if i % 100 == 0:
            gc.collect()


def short_lived():
    while not stop.is_set():
        threads = [threading.Thread(target=lambda: sum(range(1000))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


workers = [threading.Thread(target=churn, args=(k,)) for k in range(6)] + [threading.Thread(target=short_lived)]
for t in workers:
    t.start()
time.sleep(seconds)
stop.set()
for t in workers:
    t.join()
if mode == "close":
    lib.gpuscope_probe_sampling_close()
print("CHURN ok")
