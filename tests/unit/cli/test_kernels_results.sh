#!/usr/bin/env bash
# Where gpuscope kernels' results go (issue 16, item 6), with no GPU: a fake program prints
# a line on stdout and leaves the committed kernels-h100 event log where the collector
# would have written it. Checked: csv/json on stdout hold the one document only (the
# program's stdout went to stderr); -o NAME --format csv writes NAME.csv and leaves stdout
# to the program; an existing NAME.csv is refused before the program runs; the table
# keeps the program's output on stdout, before the table. Also the estimated-speedup
# columns (issue 16, item 5): the time shares of the launches add up to 100 %.
# Usage: test_kernels_results.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
. "$(dirname "$0")/check_lib.sh"  # check NAME CONDITION..., $fails
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export GPUSCOPE_SKIP_DRIVER_CHECK=1  # no GPU here
{
  echo '#!/bin/sh'
  echo 'echo "hello from the program"'
  echo "cp '$src/tests/data/kernels-h100.logs/vm-681.gslog' \"\$GPUSCOPE_LOG_DIR/\""
} >fake_program.sh
chmod +x fake_program.sh
args=(--chip GH100 --profile "$src/tests/data/profile-h100.json" --by launch)

"$bin" kernels "${args[@]}" --format csv -- ./fake_program.sh >out.csv 2>err.txt; rc=$?
check "csv to stdout: exit 0" test $rc -eq 0
check "csv to stdout: the program's line went to stderr, not into the csv" \
  sh -c '! grep -q "hello from the program" out.csv && grep -q "hello from the program" err.txt'
check "csv to stdout: stderr says where the program's stdout went" \
  grep -q "program's standard output goes to standard error" err.txt
cat >check_csv.py <<'PY'
import csv
rows = list(csv.reader(open("out.csv")))
head = rows[0]
assert head[0] == "Launch" and "Est. Speedup (%)" in head and "Program Gain (%)" in head, head
assert "Floor Time (ns)" in head and "GPU Time Share (%)" in head, head
assert len(rows) > 2 and all(len(r) == len(head) for r in rows[1:]), [len(r) for r in rows]
share = head.index("GPU Time Share (%)")
total = sum(float(r[share]) for r in rows[1:] if r[share])
assert abs(total - 100.0) < 1e-6, total
PY
check "csv to stdout: one csv table with the speedup columns; the time shares add up to 100 %" python3 check_csv.py

# Without -o the trace is gpuscope-<date>-<time>.sqlite: another folder, so the names never meet.
mkdir j && cd j
"$bin" kernels "${args[@]}" --format json -- ../fake_program.sh >../out.json 2>../err.txt; rc=$?
cd ..
check "json to stdout parses as one document" \
  sh -c "test $rc -eq 0 && python3 -c 'import json; d = json.load(open(\"out.json\")); assert \"kernel_metrics\" in d[\"reports\"]'"

"$bin" kernels "${args[@]}" --format csv -o run -- ./fake_program.sh >out.txt 2>err.txt; rc=$?
check "-o run --format csv: exit 0, results in run.csv" sh -c "test $rc -eq 0 && head -1 run.csv | grep -q '^Launch,PID,Name'"
check "-o run --format csv: stdout is the program's own output" \
  sh -c 'grep -q "hello from the program" out.txt && ! grep -q "^Launch," out.txt'
check "-o run --format csv: stderr names the results file" grep -q "results written to run.csv" err.txt
check "-o run --format csv: the trace is beside it" test -f run.sqlite
cp run.csv before.csv
"$bin" kernels "${args[@]}" --format csv -o run -- ./fake_program.sh >out.txt 2>err.txt; rc=$?
check "an existing results file is refused before the program runs" \
  sh -c "test $rc -ne 0 && ! grep -q 'hello from the program' out.txt err.txt && grep -q -- '--force-overwrite' err.txt"
"$bin" kernels "${args[@]}" --format csv -o run -f -- ./fake_program.sh >/dev/null 2>err.txt; rc=$?
check "-f replaces the results file" sh -c "test $rc -eq 0 && cmp -s run.csv before.csv"

"$bin" kernels "${args[@]}" -o tab -- ./fake_program.sh >out.txt 2>err.txt; rc=$?
check "table: the program's output, then the table, on stdout" \
  sh -c "test $rc -eq 0 && head -1 out.txt | grep -q 'hello from the program' && grep -q 'What bounds each kernel' out.txt && test ! -e tab.csv"
check "table: the verdicts carry the estimated speedup" grep -q "estimated speedup" out.txt

"$bin" kernels --report run.sqlite --profile "$src/tests/data/profile-h100.json" --format csv -o again >out.txt 2>err.txt
rc=$?
check "--report with -o NAME --format csv writes NAME.csv" sh -c "test $rc -eq 0 && test -s again.csv && test ! -s out.txt"

"$bin" kernels --help >help.txt 2>&1
check "kernels --help says where csv/json results go" sh -c 'grep -q "NAME.csv" help.txt && grep -q "stderr" help.txt'

echo "$fails failure(s)"
exit $((fails > 0))
