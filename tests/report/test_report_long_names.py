#!/usr/bin/env python3
"""gpuscope report with very long names, in headless Chromium: the committed cnn trace, copied,
then every kernel name and NVTX text overwritten by SQL with a name of 5 kB or 100 kB (a C++
template instantiation grown huge, or a trace written by another tool). Each name also carries
script injections (<script>, <img onerror>) that would mark the page if they ran.

The page measures itself: page.js sets data-rendered-ms on <html> once the page is built and
laid out (ms since the navigation started, performance.now()). The test fails when
  - the page with 100 kB names takes more than MAX_RATIO times the clean page's time;
  - the page with 5 kB or with 100 kB names takes more than MAX_MS (3 s, the target) when the
    clean page renders within CLEAN_FAST_MS here (on a machine too loaded for that, it says it did
    not check). Most of the 100 kB page's time is reading its 5.6 MB: the page data hold each
    distinct name once ("strings"), however many tables and timeline lanes list it;
  - the page data hold a name more than once;
  - a name's script ran (data-pwned on <html>), or a name became an element (<script>, <img>);
  - a long name is not clipped in the DOM (over 2.2 kB of it outside the page data), or its "show all N characters" button is missing;
  - #gpuscope-errors holds text.
It prints the times: clean, 5 kB, 100 kB names (in-page ms and Chromium's wall time) and each page's size.
Without Chromium it says so and exits 77 (ctest: skipped).

Usage: test_report_long_names.py BUILD_DIR SOURCE_DIR
"""
import html
import json
import os
import pathlib
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

SKIP = 77
MAX_MS = 3000         # the target: the page renders in 3 s whatever the names
MAX_RATIO = 4.0       # 100 kB names against the clean page, on the same machine
CLEAN_FAST_MS = 1000  # the clean page's time under which MAX_MS is checked (an unloaded machine)
INJECT = ("<script>document.documentElement.setAttribute('data-pwned','script')</script>"
          "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">")
PATTERN = "cutlass::gemm::kernel::GemmUniversal<cute::tuple<int,int,int>,cutlass::float_e4m3_t>::"


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return p


def long_names(clean: pathlib.Path, out: pathlib.Path, size: int):
    """A copy of `clean` whose kernel names and NVTX texts are each `size` bytes long."""
    shutil.copy(clean, out)
    db = sqlite3.connect(out)
    ids = [r[0] for r in db.execute(
        "SELECT name_id FROM kernels UNION SELECT short_name_id FROM kernels UNION "
        "SELECT mangled_name_id FROM kernels UNION SELECT text_id FROM nvtx_events") if r[0] is not None]
    for i in ids:
        head = f"n{i} {INJECT} "
        name = head + PATTERN * ((size - len(head)) // len(PATTERN) + 1)
        db.execute("UPDATE strings SET value = ? WHERE id = ?", (name[:size], i))
    db.commit()
    db.close()
    return len(ids)


def texts(value):
    """Every string in the JSON value `value`, at any depth (object keys aside)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from texts(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from texts(v)


def render(chromium, page: pathlib.Path):
    """Chromium's DOM of `page` once loaded, the page's own render time (ms) and the wall time (s)."""
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
             "--user-data-dir=" + str(page.parent / "chromium-profile"), "--window-size=1400,3000"]
    t0 = time.monotonic()
    p = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        fail(f"chromium --dump-dom {page.name} exited {p.returncode}: {p.stderr[-3000:]}")
    dom = p.stdout
    m = re.search(r'<html\b[^>]*\bdata-rendered-ms="(\d+)"', dom)
    if not m:
        fail(f"{page.name}: no data-rendered-ms on <html>: the page did not finish building")
    errors = re.search(r'<div id="gpuscope-errors"[^>]*>(.*?)</div>\s*<script', dom, re.S)
    if errors and errors.group(1).strip():
        fail(f"{page.name}: #gpuscope-errors holds: {errors.group(1)[:2000]}")
    return dom, int(m.group(1)), wall


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    build = pathlib.Path(sys.argv[1]).resolve()
    chromium = next((shutil.which(n) for n in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser",
                                                 "google-chrome") if n and shutil.which(n)), None)
    if not chromium:
        print("SKIP: chromium is not installed (Debian: apt-get install chromium): long names were not checked "
              "in a browser")
        return SKIP
    gpuscope = str(build / "bin/gpuscope")
    clean = build / "test-data/cnn.sqlite"
    if not clean.exists():
        fail(f"{clean} is missing (build the test_traces target)")
    times = {}
    with tempfile.TemporaryDirectory(prefix="gpuscope_long_names_") as tmp:
        work = pathlib.Path(tmp)
        for name, size in (("clean", 0), ("5kB", 5_000), ("100kB", 100_000)):
            trace = clean
            if size:
                trace = work / f"{name}.sqlite"
                n = long_names(clean, trace, size)
            page = work / f"{name}.html"
            run([gpuscope, "report", str(trace), "-o", str(page), "-f"])
            text = page.read_text(encoding="utf-8")
            dom, ms, wall = render(chromium, page)
            times[name] = (ms, wall)
            print(f"{name}: rendered in {ms} ms in the page, chromium {wall:.1f} s wall, page "
                  f"{page.stat().st_size / 1e6:.2f} MB" + (f", {n} names of {size} bytes" if size else ""))
            if re.search(r"<html\b[^>]*\bdata-pwned=", dom):
                fail(f"{name}: a script in a name ran")
            if len(re.findall(r"<script\b", dom)) != len(re.findall(r"<script\b", text)):
                fail(f"{name}: a name became a <script> element")
            if re.search(r"<img\b", dom):
                fail(f"{name}: a name became an <img> element")
            if size:
                data = json.loads(re.search(r'<script type="application/json" id="gpuscope-data">(.*?)</script>',
                                            text, re.S).group(1))
                longest = [s for s in texts(data) if len(s) >= size and PATTERN in s]  # not the base64 columns
                if len(longest) != len(set(longest)) or not set(longest) <= set(data["strings"]):
                    fail(f"{name}: the page data hold {len(longest)} long names, {len(set(longest))} distinct: "
                         f"each name should be there once, in data.strings")
                # The page data holds each name once; outside it the DOM shows only the start of each.
                shown = html.unescape(re.sub(r'<script type="application/json" id="gpuscope-data">.*?</script>', "",
                                             dom, flags=re.S))
                if PATTERN * 25 in shown:
                    fail(f"{name}: a whole long name is in the DOM outside the page data: names are not clipped")
                if 'class="show-all"' not in dom:
                    fail(f"{name}: no 'show all N characters' button for a long name")
    clean_ms, big_ms = times["clean"][0], times["100kB"][0]
    ratio = big_ms / max(clean_ms, 1)
    print(f"100 kB names / clean page: {ratio:.2f} (in-page times {big_ms} / {clean_ms} ms)")
    if ratio > MAX_RATIO:
        fail(f"the page with 100 kB names takes {ratio:.1f} x the clean page's time (at most {MAX_RATIO})")
    if clean_ms <= CLEAN_FAST_MS:
        for name in ("5kB", "100kB"):
            if times[name][0] > MAX_MS:
                fail(f"the page with {name} names took {times[name][0]} ms to render (at most {MAX_MS}; the clean "
                     f"page {clean_ms} ms)")
        print(f"the pages with 5 kB and 100 kB names rendered within {MAX_MS} ms")
    else:
        print(f"NOTE: the absolute bound ({MAX_MS} ms) was not checked: the clean page itself took {clean_ms} ms "
              f"on this machine (over {CLEAN_FAST_MS} ms: too loaded to judge); 100 kB names: {big_ms} ms")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
