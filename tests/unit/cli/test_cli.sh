#!/usr/bin/env bash
# End-to-end checks of the gpuscope CLI that need no GPU: bad input is refused
# clearly, exit codes pass through, nothing is clobbered, a target that never
# uses CUDA gives an empty but valid trace. Usage: test_cli.sh BUILD_DIR
set -uo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fails=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails+1)); fi
}
export GPUSCOPE_SKIP_DRIVER_CHECK=1  # no GPU here: exercise the launcher alone

"$bin" trace -o t1 -- gpuscope-no-such-command 2>err.txt; rc=$?
check "missing command exits 127" test $rc -eq 127
check "missing command says not found" grep -q "command not found" err.txt
check "missing command leaves no files" test ! -e t1.sqlite -a ! -e t1.logs

"$bin" trace -o t2 -q -- sh -c 'exit 7' 2>err.txt; rc=$?
check "exit code passes through" test $rc -eq 7
check "trace written for a CUDA-less target" test -f t2.sqlite
check "warns that nothing used CUDA" grep -q "no process initialised CUDA" err.txt
check "schema version recorded" test "$(sqlite3 t2.sqlite "SELECT value FROM meta WHERE key='schema_version'")" = 1
check "logs removed after import" test ! -e t2.logs

cp t2.sqlite before.sqlite
"$bin" trace -o t2 -- true 2>err.txt; rc=$?
check "existing output refused" test $rc -ne 0
check "refusal names --force-overwrite" grep -q -- "--force-overwrite" err.txt
check "existing output untouched" cmp -s t2.sqlite before.sqlite
"$bin" trace -o t2 -f -q -- true 2>err.txt; rc=$?
check "--force-overwrite replaces" test $rc -eq 0

"$bin" trace -o t3 -q -- sh -c 'kill -9 $$' 2>err.txt; rc=$?
check "killed target gives 137" test $rc -eq 137
check "killed target is reported" grep -q "killed by signal 9" err.txt
check "killed target still gets a trace" test -f t3.sqlite

"$bin" summary t2.sqlite >sum.txt 2>&1; rc=$?
check "summary of an empty trace works" test $rc -eq 0
check "empty trace says no GPU activity" grep -qi "no GPU activity" sum.txt

"$bin" trace -o t4 --capture-range=nvtx -- true 2>err.txt; rc=$?
check "nvtx capture without a range is refused" test $rc -ne 0

echo "not a database" > bad.sqlite
"$bin" summary bad.sqlite 2>err.txt; rc=$?
check "non-trace file refused" test $rc -ne 0
check "non-trace file error is clear" grep -qi "trace" err.txt

"$bin" trace --help >help.txt; rc=$?
check "--help works" test $rc -eq 0
check "--help teaches capture ranges" grep -q "cudaProfilerApi" help.txt

echo "$fails failure(s)"
exit $((fails > 0))
