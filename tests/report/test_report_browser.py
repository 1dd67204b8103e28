#!/usr/bin/env python3
"""gpuscope report in a real browser (issue 19): headless Chromium opens the page of

  - the committed fixture traces (cnn: CUDA + NVTX; cnn-pytorch: PyTorch steps, ops, modules;
    kernels-h100: hardware counters, its kernels on the roofline),
  - a trace whose kernel names, NVTX messages and device name are hostile (hostile_logs.py:
    quotes, <script>alert(1)</script>, </svg>, control characters, bytes that are not UTF-8;
    then raw bytes that are not UTF-8 written straight into the trace's strings table),
  - a generated trace of about 1M events (gpuscope_make_trace --launches 500000),

and fails on
  - any text in #gpuscope-errors (the page's window.onerror / unhandledrejection handlers write
    there) or any "Uncaught" console line Chromium logs (--enable-logging=stderr --v=0);
  - a number the page shows (data-report/data-row/data-col/data-value in the DOM) that differs
    from `gpuscope stats -r NAME --format json` of the same trace;
  - a hostile name that became markup: extra <script> elements in the DOM, or the name not shown
    as text;
  - anything that would fetch from the network: <script src>, <link>, @import, url(http...),
    fetch(, XMLHttpRequest, a src/href to http(s);
  - a page of the 1M-event trace over 10 MB;
  - `gpuscope diff A B --html` (cnn vs cnn-pytorch): an error, or a number that differs from
    `gpuscope diff --format json --top 0`.
It saves a screenshot of each page (1400x3000) into $GPUSCOPE_REPORT_SCREENSHOTS (default
BUILD/report-screenshots). Without Chromium it says so and exits 77 (ctest: skipped).

Usage: test_report_browser.py BUILD_DIR SOURCE_DIR [--quick] (--quick: no 1M-event trace)
"""
import html.parser
import json
import math
import os
import pathlib
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SKIP = 77
HOSTILE_CORE = "<script>alert(1)</script></svg>"
MAX_PAGE_BYTES = 10_000_000


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Dom(html.parser.HTMLParser):
    """The parts of the dumped DOM the test reads."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.numbers = []  # (report, row, col, value, text)
        self.scripts = 0
        self.errors = ""
        self.texts = []
        self._stack = []  # (tag, attrs, text parts)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag in ("br", "meta", "input", "img", "link", "hr", "wbr", "source", "col"):
            return
        self._stack.append((tag, a, []))

    def handle_endtag(self, tag):
        while self._stack:
            t, a, parts = self._stack.pop()
            text = "".join(parts)
            if self._stack:
                self._stack[-1][2].append(text)
            if a.get("id") == "gpuscope-errors":
                self.errors = text
            if "data-report" in a:
                self.numbers.append((a["data-report"], int(a["data-row"]), a["data-col"],
                                     int(a.get("data-col-index", "-1")), a["data-value"], text))
            if t == tag:
                return

    def handle_data(self, data):
        self.texts.append(data)
        if self._stack and self._stack[-1][0] not in ("script", "style"):
            self._stack[-1][2].append(data)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    return p


def static_checks(page: pathlib.Path):
    text = page.read_text(encoding="utf-8")
    bad = {
        "<script src": r"<script\b[^>]*\bsrc\s*=",
        "<link>": r"<link\b",
        "@import": r"@import\b",
        "url(http": r"url\(\s*['\"]?\s*(https?:)?//",
        "fetch(": r"\bfetch\s*\(",
        "XMLHttpRequest": r"XMLHttpRequest",
        "src/href to http": r"\b(src|href)\s*=\s*['\"]?\s*(https?:)?//",
        "import(": r"\bimport\s*\(\s*['\"]",
        "sendBeacon": r"sendBeacon",
        "WebSocket": r"\bnew\s+WebSocket\b",
    }
    for what, pattern in bad.items():
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            fail(f"{page.name}: '{what}' at byte {m.start()}: {text[max(0, m.start() - 60):m.end() + 60]!r}")
    if text.count('id="gpuscope-data"') != 1:
        fail(f"{page.name}: not one #gpuscope-data element")
    return text


def browser(chromium, page: pathlib.Path, shots: pathlib.Path):
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
             "--user-data-dir=" + str(page.parent / "chromium-profile")]
    p = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"chromium --dump-dom {page.name} exited {p.returncode}: {p.stderr[-3000:]}")
    uncaught = [line for line in p.stderr.splitlines() if "Uncaught" in line or ":CONSOLE" in line and "rror" in line]
    if uncaught:
        fail(f"{page.name}: the browser console reports errors:\n" + "\n".join(uncaught[:20]))
    shot = shots / (page.stem + ".png")
    s = subprocess.run(flags + ["--screenshot=" + str(shot), "--window-size=1400,3000", "--hide-scrollbars",
                                page.as_uri()], capture_output=True, text=True, timeout=300)
    if s.returncode != 0 or not shot.exists():
        fail(f"chromium --screenshot {page.name} failed: {s.stderr[-2000:]}")
    dom = Dom()
    dom.feed(p.stdout)
    dom.close()
    if dom.errors.strip():
        fail(f"{page.name}: #gpuscope-errors holds:\n{dom.errors.strip()[:4000]}")
    return dom, p.stdout


def same(page_value: str, stats_value) -> bool:
    if stats_value is None:
        return page_value == "null"
    if isinstance(stats_value, str):
        return page_value == stats_value
    try:
        v = float(page_value)
    except ValueError:
        return False
    return v == float(stats_value) or (math.isnan(v) and math.isnan(float(stats_value)))


def compare_with_stats(gpuscope, trace, dom, name):
    """Every number of a stats report the page shows equals stats --format json's."""
    reports = sorted({n[0] for n in dom.numbers if n[0] not in ("gpu_time", "steps")})
    if "top" not in reports or "cuda_gpu_kern_sum" not in reports:
        fail(f"{name}: the page shows no numbers of top or cuda_gpu_kern_sum ({reports})")
    want = set(reports) - {"top_kernels"}
    doc = json.loads(run([gpuscope, "stats", trace, "-r", ",".join(sorted(want)), "--format", "json"]).stdout)
    stats = doc["reports"]
    compared = {}
    for report, row, col, index, value, text in dom.numbers:
        if report in ("gpu_time", "steps"):
            continue
        if report not in stats:
            fail(f"{name}: the page shows report {report}, stats gives {sorted(stats)}")
        r = stats[report]
        cols = [c["name"] for c in r["columns"]]
        if not 0 <= index < len(cols) or cols[index] != col:
            fail(f"{name}: {report} has no column {col!r} at {index} in stats ({cols})")
        if row >= len(r["rows"]):
            fail(f"{name}: {report} row {row} is not in stats ({len(r['rows'])} rows)")
        sv = r["rows"][row][index]
        if not same(value, sv):
            fail(f"{name}: {report} row {row} {col!r}: the page shows {value} ({text!r}), stats {sv}")
        if not text.strip():
            fail(f"{name}: {report} row {row} {col!r}: no text shown")
        compared[report] = compared.get(report, 0) + 1
    for report in reports:
        r = stats.get(report)
        if r is not None:
            numeric = sum(1 for c in r["columns"] if c["type"] != "text")
            expect = min(len(r["rows"]), 100) * numeric
            if compared.get(report, 0) < expect:
                fail(f"{name}: {report}: {compared.get(report, 0)} numbers compared, expected {expect}")
    print(f"{name}: {sum(compared.values())} numbers equal stats --format json ({compared})")


def check_diff(gpuscope, chromium, a, b, work, shots):
    """gpuscope diff A B --html: no error, every number equals diff --format json --top 0."""
    page = work / "diff.html"
    run([gpuscope, "diff", str(a), str(b), "--html", str(page), "-f", "--format", "json"])
    static_checks(page)
    dom, _ = browser(chromium, page, shots)
    doc = json.loads(run([gpuscope, "diff", str(a), str(b), "--format", "json", "--top", "0"]).stdout)
    r = doc["reports"]["trace_diff"]
    n = 0
    for report, row, col, index, value, text in dom.numbers:
        if report != "trace_diff":
            fail(f"diff page: a number of {report}")
        if r["columns"][index]["name"] != col or not same(value, r["rows"][row][index]):
            fail(f"diff page: row {row} {col!r} shows {value}, diff --format json {r['rows'][row][index]}")
        n += 1
    numeric = sum(1 for c in r["columns"] if c["type"] != "text")
    if n < min(100, len(r["rows"])) * numeric or n == 0:
        fail(f"diff page: {n} numbers compared")
    print(f"diff: {n} numbers equal gpuscope diff --format json")


def hostile_trace(gpuscope, src, work):
    logs = work / "hostile.logs"
    run([sys.executable, str(src / "tests/unit/cli/hostile_logs.py"), str(src / "tests/data/cnn.logs"), str(logs)])
    run([gpuscope, "import", str(logs), "-o", str(work / "hostile")])
    trace = work / "hostile.sqlite"
    # The importer repairs text that is not UTF-8; a trace written by another tool may not:
    # raw bytes into the name of the busiest kernel and of an NVTX range.
    db = sqlite3.connect(trace)
    raw = b"raw\xff\xfe\xc3(<script>alert(2)</script>\x01\x1b[31m"
    kid = db.execute("SELECT name_id FROM kernels GROUP BY name_id ORDER BY SUM(end_ns - start_ns) DESC "
                     "LIMIT 1").fetchone()[0]
    db.execute("UPDATE strings SET value = CAST(? AS TEXT) WHERE id = ?", (raw, kid))
    nid = db.execute("SELECT text_id FROM nvtx_events WHERE text_id IS NOT NULL LIMIT 1").fetchone()
    if nid:
        db.execute("UPDATE strings SET value = CAST(? AS TEXT) WHERE id = ?", (raw + b" nvtx", nid[0]))
    db.commit()
    db.close()
    return trace


def check_hostile(dom, dumped, name, expected_scripts):
    if dom.scripts != expected_scripts:
        fail(f"{name}: {dom.scripts} <script> elements in the DOM, the page has {expected_scripts}: a name became markup")
    text = "".join(dom.texts)
    if HOSTILE_CORE not in text:
        fail(f"{name}: the hostile name is not shown as text")
    if "raw\ufffd" not in text or "(<script>alert(2)</script>" not in text:
        fail(f"{name}: the raw bytes that are not UTF-8 are not shown as U+FFFD and text")
    if re.search(r"<script>alert", dumped):
        fail(f"{name}: a hostile name appears as markup in the DOM")
    print(f"{name}: hostile names shown as text, no extra script element")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    build = pathlib.Path(sys.argv[1]).resolve()
    src = pathlib.Path(sys.argv[2]).resolve()
    quick = "--quick" in sys.argv[3:]
    chromium = find_chromium()
    if not chromium:
        print("SKIP: chromium is not installed (Debian: apt-get install chromium; scripts/install-deps): "
              "the report page was not checked in a browser")
        return SKIP
    gpuscope = str(build / "bin/gpuscope")
    shots = pathlib.Path(os.environ.get("GPUSCOPE_REPORT_SCREENSHOTS", build / "report-screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpuscope_report_") as tmp:
        work = pathlib.Path(tmp)
        cases = [("cnn", build / "test-data/cnn.sqlite"), ("cnn-pytorch", build / "test-data/cnn-pytorch.sqlite"),
                 ("kernels-h100", build / "test-data/kernels-h100.sqlite"),
                 ("hostile", hostile_trace(gpuscope, src, work))]
        if not quick:
            big = work / "big1m.sqlite"
            run([str(build / "bin/gpuscope_make_trace"), str(big), "--launches", "500000"])
            cases.append(("big1m", big))
        for name, trace in cases:
            if not pathlib.Path(trace).exists():
                fail(f"{trace} is missing (build the test_traces target)")
            page = work / f"{name}.html"
            run([gpuscope, "report", str(trace), "-o", str(page), "-f"])
            text = static_checks(page)
            size = page.stat().st_size
            if name == "big1m" and size > MAX_PAGE_BYTES:
                fail(f"{name}: the page is {size} bytes, over {MAX_PAGE_BYTES}")
            dom, dumped = browser(chromium, page, shots)
            if name != "kernels-h100":  # counters only: no timeline events, so no top or kernel table numbers
                compare_with_stats(gpuscope, str(trace), dom, name)
            if name == "hostile":
                check_hostile(dom, dumped, name, len(re.findall(r"<script\b", text)))
            if name == "kernels-h100" and 'class="point kernel"' not in dumped:
                fail(f"{name}: no kernel marker on the page's roofline (a gpuscope kernels trace)")
            print(f"{name}: page {size / 1e6:.2f} MB, screenshot {shots / (name + '.png')}")
        check_diff(gpuscope, chromium, build / "test-data/cnn.sqlite", build / "test-data/cnn-pytorch.sqlite", work,
                   shots)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
