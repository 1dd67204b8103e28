#!/usr/bin/env bash
# gpuscope stats -r py_sum,gpu_idle_py end to end on the traces of gpuscope_make_py_samples_trace
# (tests/unit/analyze/py_samples_trace.hpp): the headline and rows in table, csv and json; the
# judged window's note (and none with --whole-run); a trace without samples says to trace with
# --python-sampling and exits 0; a GPU never idle says so. Usage: test_py_samples_cli.sh BUILD_DIR
set -uo pipefail
build="$(cd "$1" && pwd)"
G="$build/bin/gpuscope"
. "$(dirname "$0")/check_lib.sh"  # check NAME CONDITION..., $fails
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$build/bin/gpuscope_make_py_samples_trace" . || { echo "FAIL: could not write the traces"; exit 1; }

check "stats -r py_sum,gpu_idle_py runs" bash -c "'$G' stats samples.sqlite -r py_sum,gpu_idle_py >both.txt"
check "...gpu_idle_py's headline names the line the GPU waited on" grep -qF \
  "GPU idle 33 % of the wall time (10 ms of 30 ms in 1 gap); 100 % of that idle time was sampled in data.py:123 load ← train.py:57 <module> (thread 1001)" both.txt
check "...py_sum counts the samples without a Python frame" grep -qF \
  "5 of 30 samples of thread 1002 (pid 100) had no Python frame" both.txt
check "...both say which window they judged" test "$(grep -c 'judged from the first GPU work on' both.txt)" = 2
check "--whole-run: no window note" bash -c "! '$G' stats samples.sqlite -r py_sum,gpu_idle_py --whole-run | grep -q 'judged'"
"$G" stats samples.sqlite -r gpu_idle_py --format csv >idle.csv
check "csv: the header with units" grep -qx \
  "PID,TID,Frame,Called From,Self Idle Time (ms),Self Idle (%),Samples (samples),Total Idle Time (ms),Total Idle (%)" idle.csv
check "csv: thread 1001's 10 ms in load" grep -qx "100,1001,data.py:123 load,train.py:57 <module>,10,100,10,10,100" idle.csv
"$G" stats samples.sqlite -r py_sum --format json >sum.json
check "json: py_sum's rows" python3 -c "
import json, sys
r = json.load(open('sum.json'))['reports']['py_sum']
rows = [row[2:4] + row[5:6] for row in r['rows']]
sys.exit(0 if rows[:3] == [['train.py:57 <module>', 0, 30], ['train.py:60 step', 20, 20], ['data.py:123 load', 10, 10]] else 1)"
check "no samples: exit 0" bash -c "'$G' stats no_samples.sqlite -r py_sum,gpu_idle_py >none.txt"
check "...and the note says to trace with --python-sampling (both reports)" \
  test "$(grep -c 'no Python samples in the capture range: trace with `gpuscope trace --python-sampling' none.txt)" = 2
check "GPU never idle: said so" bash -c "'$G' stats busy.sqlite -r gpu_idle_py | grep -qF 'the GPU was busy the whole window'"
# gpuscope export: the samples (the first of the gap 10.5 ms after the process start) on their threads' rows (JSON instants; pftrace PerfSamples,
# decoded in tests/unit/render/test_python_samples_export.cpp), counted in the summary line.
check "export: the summary counts the samples" bash -c \
  "'$G' export samples.sqlite -o s.json 2>&1 | grep -qF 'with 60 Python stack samples'"
check "export: one instant per sample, on its thread, with its stack" python3 -c "
import json, sys
t = json.load(open('s.json'))
base = t['baseTimeNanoseconds']
s = [e for e in t['traceEvents'] if e.get('cat') == 'python_sample']
a = [e for e in s if e['tid'] == 1001]
gap = [e for e in a if e['name'] == 'load (data.py:123)']
ok = (len(s) == 60 and len(a) == 30 and len(gap) == 10 and all(e['pid'] == 100 for e in s)
      and gap[0]['ts'] == 10500.0 - (base - 5000000) / 1000
      and gap[0]['args']['Python stack'] == 'load (data.py:123) \u2190 <module> (train.py:57)'
      and gap[0]['args']['state'] == 'off CPU, no GIL'
      and sum(e['name'] == '(no Python frame)' for e in s) == 5)
sys.exit(0 if ok else 1)"
check "export --format pftrace: counted too" bash -c \
  "'$G' export samples.sqlite --format pftrace -o s.pftrace 2>&1 | grep -qF 'with 60 Python stack samples'"
check "export of a trace without samples: no sample, no count" bash -c \
  "'$G' export no_samples.sqlite -o n.json 2>n.err && ! grep -q python_sample n.json && ! grep -q 'Python stack samples' n.err"
exit $((fails > 0))
