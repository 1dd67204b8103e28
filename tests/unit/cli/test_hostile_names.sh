#!/usr/bin/env bash
# Hostile names (issue: text from the traced program is data): the committed event logs with
# every kernel name, NVTX message, host, command line and device name replaced by one holding
# quotes, backslashes, commas, newlines, <script>, </svg>, ]]>, control characters and bytes
# that are not UTF-8 (hostile_logs.py), imported, then every output: summary and stats in
# every format, the Perfetto export, kernels --report in every format and its roofline SVG.
# Each is parsed by a standard parser (json, csv, xml.etree) as UTF-8 and must show the name
# as text. Usage: test_hostile_names.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 "$src/tests/unit/cli/hostile_logs.py" "$src/tests/data/cnn.logs" cnn.logs
python3 "$src/tests/unit/cli/hostile_logs.py" "$src/tests/data/kernels-h100.logs" k.logs
"$bin" import cnn.logs -o cnn 2>/dev/null
"$bin" import k.logs -o k 2>/dev/null
profile="$src/tests/data/profile-h100.json"

# Names whole in the table (--name-width full): the check is that the name survives as text,
# not where a long name is cut (test_table_layout.sh).
for f in table csv json markdown; do
  "$bin" summary cnn.sqlite --format "$f" --name-width full > "summary.$f"
  "$bin" stats cnn.sqlite -r cuda_gpu_kern_sum,nvtx_sum,cuda_gpu_trace,top --format "$f" --name-width full > "stats.$f"
  "$bin" kernels --report k.sqlite --profile "$profile" --format "$f" --name-width full > "kernels.$f" 2>/dev/null
done
"$bin" export cnn.sqlite --format perfetto -o cnn.perfetto.json 2>/dev/null
"$bin" kernels --report k.sqlite --profile "$profile" --svg roofline.svg > /dev/null 2>&1

python3 - <<'PY'
import csv, io, json, pathlib, re, xml.etree.ElementTree as ET
CORE = "<script>alert(1)</script></svg>]]>&amp;"   # must survive as text
def text(p):
    return pathlib.Path(p).read_bytes().decode("utf-8")   # strict: every output is UTF-8
def no_raw_controls(p, s):
    bad = [c for c in s if ord(c) < 0x20 and c not in "\n\r" or ord(c) == 0x7f]
    assert not bad, f"{p}: raw control characters {sorted(set(map(hex, map(ord, bad))))}"
def has_name(p, s):
    assert CORE in s, f"{p}: the hostile name is not shown as text"
    assert "\ufffd" in s, f"{p}: the bytes that are not UTF-8 are not shown as U+FFFD"
checked = 0
for cmd in ("summary", "stats", "kernels"):
    s = text(f"{cmd}.json"); doc = json.loads(s)   # one JSON document
    names = json.dumps(doc, ensure_ascii=False)
    has_name(f"{cmd}.json", names); checked += 1
    s = text(f"{cmd}.csv"); rows = list(csv.reader(io.StringIO(s, newline="")))
    assert len({len(r) for r in rows if r}) == 1, f"{cmd}.csv: not one table (row lengths differ)"
    has_name(f"{cmd}.csv", "\n".join(",".join(r) for r in rows)); checked += 1
    for f in ("table", "markdown"):
        s = text(f"{cmd}.{f}"); no_raw_controls(f"{cmd}.{f}", s)
        shown = s.replace("\\", "") if f == "markdown" else s   # markdown backslash-escapes < > _ ...
        assert "<script>alert(1)</script>" in shown, f"{cmd}.{f}: name missing"; checked += 1
doc = json.loads(text("cnn.perfetto.json"))
kern = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
assert len(kern) == 306 and all(CORE in e["name"] for e in kern), "perfetto: kernel names"
steps = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation"]
assert len(steps) == 6 and all(CORE in e["name"] for e in steps), "perfetto: NVTX names"
checked += 1
svg = ET.fromstring(pathlib.Path("roofline.svg").read_bytes())   # well-formed XML
alltext = "".join(svg.itertext())
assert "<script>alert(1)" in alltext, "svg: the hostile name is not shown as text"
assert not svg.findall(".//{http://www.w3.org/2000/svg}script") and not svg.findall(".//script"), "svg: a script element"
checked += 1
print(f"ok   {checked} outputs of hostile names parse as UTF-8 with json, csv and xml.etree and show the names as text")
PY
