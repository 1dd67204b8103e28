#!/usr/bin/env bash
# Every gpuscope command that writes a file, run against a file that is already there:
# without -f it refuses, names the file and --force-overwrite, and keeps the bytes; with -f
# it replaces them. Writers made to fail half-way (a full disk via `ulimit -f`, an
# unwritable folder, a damaged trace, a chart that cannot be drawn) keep the old file byte
# for byte and leave no temporary file. Two `gpuscope trace -o same` at once: the second
# refuses at start; a lock left by a killed gpuscope is taken over.
# No GPU here: commands that need one (bench OP, peak, kernels, trace) are checked up to
# their refusal, which comes before the driver is touched.
# Usage: test_output_files.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
cnn="$(cd "$1" && pwd)/test-data/cnn.sqlite"         # imported from tests/data/cnn.logs at build time
kern="$(cd "$1" && pwd)/test-data/kernels-h100.sqlite"
profile="$src/tests/data/profile-h100.json"
sweep="$src/tests/data/bench-copy-sweep.json"
. "$(dirname "$0")/check_lib.sh"  # check NAME CONDITION..., $fails
work=$(mktemp -d)
chmod 755 "$work"
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cd "$work"
export GPUSCOPE_SKIP_DRIVER_CHECK=1 GPUSCOPE_CACHE_DIR="$work/cache"

old() {  # old FILE: a file with recognisable bytes (a NUL and a non-UTF-8 byte), and its copy
  printf 'bytes that were here \000\377 %s\n' "$1" > "$1" && cp "$1" "$1.orig"
}
kept() { cmp -s "$1" "$1.orig"; }
no_temps() { ! find "${1:-.}" -name '.*.tmp.*' | grep -q .; }

# refused NAME FILE CMD...: CMD exits non-zero, says FILE exists and names --force-overwrite,
# leaves FILE as it was and no temporary file.
refused() {
  local name=$1 file=$2; shift 2
  old "$file"
  "$@" >out.txt 2>err.txt; rc=$?
  check "$name: refused without -f (exit $rc)" test $rc -ne 0
  check "$name: the error names the file and -f" sh -c "grep -q -- '$file already exists; use --force-overwrite (-f)' err.txt"
  check "$name: the file is kept byte for byte" kept "$file"
  check "$name: no temporary file left" no_temps
}
# replaced NAME FILE CMD...: with -f (in CMD) it exits 0 and FILE holds something else.
replaced() {
  local name=$1 file=$2; shift 2
  old "$file"
  "$@" >out.txt 2>err.txt; local rc=$?
  check "$name -f: replaces (exit $rc)" sh -c "test $rc -eq 0 && ! cmp -s '$file' '$file.orig'"
  check "$name -f: no temporary file left" no_temps
}

check "committed traces found" test -s "$cnn" -a -s "$kern"

# ---- every writer against an existing file ----
refused "export" cnn.json "$bin" export "$cnn" -o cnn.json
replaced "export" cnn.json "$bin" export "$cnn" -o cnn.json -f
check "export -f: the new file is a Perfetto timeline" python3 -c 'import json; json.load(open("cnn.json"))["traceEvents"]'
old cnn.perfetto.json; cp "$cnn" cnn.sqlite
"$bin" export cnn.sqlite >/dev/null 2>err.txt; rc=$?
check "export: the default output NAME.perfetto.json is kept too" sh -c "test $rc -ne 0 && cmp -s cnn.perfetto.json cnn.perfetto.json.orig"

refused "stats -o" stats.csv "$bin" stats "$cnn" -r cuda_api_sum --format csv -o stats.csv
replaced "stats -o" stats.csv "$bin" stats "$cnn" -r cuda_api_sum --format csv -o stats.csv --force-overwrite
check "stats -o -f: the new file holds the report" grep -q "cudaLaunchKernel" stats.csv

refused "roofline -o" roof.svg "$bin" roofline "$profile" -o roof.svg
check "roofline: refused before printing anything" test ! -s out.txt
replaced "roofline -o" roof.svg "$bin" roofline "$profile" -o roof.svg -f
check "roofline -f: the new file is an SVG" python3 -c 'import xml.etree.ElementTree as E; E.parse("roof.svg")'

refused "bench report --csv" sweep.csv "$bin" bench report "$sweep" --csv sweep.csv
refused "bench report --svg" sweep.svg "$bin" bench report "$sweep" --svg sweep.svg
replaced "bench report --svg" sweep.svg "$bin" bench report "$sweep" --svg sweep.svg --csv sweep.csv -f
check "bench report -f: the new SVG parses" python3 -c 'import xml.etree.ElementTree as E; E.parse("sweep.svg")'
for opt in --json --csv --svg; do
  CUDA_VISIBLE_DEVICES= refused "bench OP $opt (no GPU)" "b$opt" "$bin" bench copy --sizes 2^20 "$opt" "b$opt"
  check "bench OP $opt: refused with exit 2, before looking for a GPU" sh -c "test $rc -eq 2 && ! grep -qi 'no usable\|no CUDA' err.txt"
done

for opt in --json --svg; do
  CUDA_VISIBLE_DEVICES= refused "peak $opt (no GPU)" "p$opt" "$bin" peak --no-save "$opt" "p$opt"
  check "peak $opt: refused before the GPU is touched (exit 2, not 3)" sh -c "test $rc -eq 2 && ! grep -qi 'no usable\|no CUDA' err.txt"
done

refused "kernels --report --svg" k.svg "$bin" kernels --report "$kern" --svg k.svg
replaced "kernels --report --svg" k.svg "$bin" kernels --report "$kern" --svg k.svg -f
check "kernels --svg -f: the new file is an SVG" python3 -c 'import xml.etree.ElementTree as E; E.parse("k.svg")'
refused "kernels --svg (before running)" k2.svg "$bin" kernels --chip GH100 --svg k2.svg -o k2 -- true
check "kernels --svg: nothing was run" test ! -e k2.sqlite -a ! -e k2.logs
refused "kernels -o" k3.sqlite "$bin" kernels --chip GH100 -o k3 -- true
check "kernels -o: nothing was run" test ! -e k3.logs

refused "trace -o" t.sqlite "$bin" trace -o t -q -- true
check "trace -o: nothing was run" test ! -e t.logs
refused "import -o" imp.sqlite "$bin" import "$src/tests/data/cnn.logs" -o imp
replaced "import -o" imp.sqlite "$bin" import "$src/tests/data/cnn.logs" -o imp -f
check "import -f: the new trace holds the 306 kernels" test "$(sqlite3 imp.sqlite 'SELECT COUNT(*) FROM kernels')" = 306
refused "merge -o" job.sqlite "$bin" merge "$cnn" imp.sqlite -o job
replaced "merge -o" job.sqlite "$bin" merge "$cnn" imp.sqlite -o job -f
check "merge -f: the job trace holds both traces' kernels" test "$(sqlite3 job.sqlite 'SELECT COUNT(*) FROM kernels')" = 612
check "--help of every writing command states the rule" sh -c "
  for c in trace export stats roofline bench peak kernels import merge; do
    '$bin' \$c --help | tr -s ' \n' ' ' | grep -q -- '-f,--force-overwrite.* only once ' || { echo \$c; exit 1; }
  done"

# ---- writers made to fail half-way keep the old file ----
# A full disk: `ulimit -f 4` (4 KiB per file); gpuscope ignores SIGXFSZ, so write(2) fails with EFBIG.
limited() { (ulimit -f 4; "$@"); }
fails_half_way() {  # fails_half_way NAME FILE CMD...
  local name=$1 file=$2; shift 2
  old "$file"
  "$@" >out.txt 2>err.txt; local rc=$?
  check "$name: fails (exit $rc)" test $rc -ne 0
  check "$name: says why" grep -qi "$REASON" err.txt
  check "$name: the old file is kept byte for byte" kept "$file"
  check "$name: no temporary file left" no_temps
}
REASON="File too large"
fails_half_way "export, ulimit -f 4" full.json limited "$bin" export "$cnn" -o full.json -f
fails_half_way "stats -o, ulimit -f 4" full.csv limited "$bin" stats "$cnn" -r cuda_gpu_trace --format csv -o full.csv -f
fails_half_way "roofline -o, ulimit -f 4" full.svg limited "$bin" roofline "$profile" -o full.svg -f
fails_half_way "bench report --csv, ulimit -f 4" fullb.csv limited "$bin" bench report "$sweep" --svg fullb.svg --csv fullb.csv -f
REASON="disk\|too large\|full"
fails_half_way "import -f, ulimit -f 4" full.sqlite limited "$bin" import "$src/tests/data/cnn.logs" -o full -f
check "import: the logs it read are untouched" test -s "$src/tests/data/cnn.logs/run.json"
fails_half_way "merge -f, ulimit -f 4" fullm.sqlite limited "$bin" merge "$cnn" imp.sqlite -o fullm -f

# An unwritable folder (as root: run as nobody, for whom the permissions hold).
mkdir ro && old ro/kept.json && chmod 555 ro
as_user=()
[[ $(id -u) -eq 0 ]] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if "${as_user[@]}" test -x "$bin" -a -r "$cnn" 2>/dev/null; then
  REASON="Permission denied"
  cp ro/kept.json.orig kept.json.orig
  "${as_user[@]}" "$bin" export "$cnn" -o ro/kept.json -f >out.txt 2>err.txt; rc=$?
  check "export into an unwritable folder: fails (exit $rc)" test $rc -ne 0
  check "export into an unwritable folder: says why and that the file is kept" \
    grep -q "Permission denied.*the file that was there is unchanged" err.txt
  check "export into an unwritable folder: the old file is kept" cmp -s ro/kept.json kept.json.orig
  check "export into an unwritable folder: no temporary file" no_temps ro
else
  echo "skip unwritable folder: $bin is not reachable as an unprivileged user here"
fi

# Bad input found late: a trace that opens, but whose kernels table is damaged.
# The kernels table's root page overwritten: the schema (page 1) still reads.
damage_table() {  # TRACE TABLE: overwrite TABLE's root page; the schema (page 1) still reads
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
page = db.execute("PRAGMA page_size").fetchone()[0]
root = db.execute("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (sys.argv[2],)).fetchone()[0]
db.close()
with open(sys.argv[1], "r+b") as f:
    f.seek((root - 1) * page)
    f.write(bytes([0x0d]) + b"\xff" * (page - 1))  # a leaf page header with impossible cell counts
PY
}
cp "$cnn" damaged.sqlite
damage_table damaged.sqlite kernels
REASON="malformed\|corrupt\|damaged"
fails_half_way "export of a damaged trace" dmg.json "$bin" export damaged.sqlite -o dmg.json -f

# Reports on the intact tables still run: only the memcpys table damaged. The judged window
# (cuda_api_sum and nvtx_sum judge it) reads the memcpys: those two cannot run either.
cp "$cnn" nocopies.sqlite
damage_table nocopies.sqlite memcpys
"$bin" stats nocopies.sqlite -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,nvtx_sum --format csv \
  >partial.csv 2>err.txt; rc=$?
check "stats on a trace with a damaged memcpys table: exit 1 (got $rc)" test $rc -eq 1
check "stats on a damaged memcpys table: the kernel summary still prints, with its rows" \
  python3 -c 'import csv,sys; rows=list(csv.DictReader(open(sys.argv[1]))); sys.exit(0 if "section" not in rows[0] and len(rows) > 5 else 1)' partial.csv
check "stats on a damaged memcpys table: names the report that could not run and the damage" \
  grep -q "3 of 4 reports could not run (cuda_api_sum, cuda_gpu_mem_time_sum, nvtx_sum)" err.txt
check "stats on a damaged memcpys table: the damage error, not the SQL" grep -q "corrupt or truncated" err.txt
"$bin" stats nocopies.sqlite -r cuda_gpu_mem_time_sum >/dev/null 2>err.txt; rc=$?
check "stats with only the damaged report: the damage error (exit $rc)" grep -q "corrupt or truncated" err.txt

# kernels --report --svg when no chart can be drawn (no kernel has DRAM or L2 bytes): a
# warning, and the file that was there stays (it used to be deleted).
cp "$kern" nobytes.sqlite
sqlite3 nobytes.sqlite "DELETE FROM kernel_metrics WHERE metric_id IN
  (SELECT id FROM strings WHERE value LIKE 'dram\_\_%' ESCAPE '\\' OR value LIKE 'lts\_\_%' ESCAPE '\\')"
old nochart.svg
"$bin" kernels --report nobytes.sqlite --svg nochart.svg -f >out.txt 2>err.txt; rc=$?
check "kernels --svg with no chart to draw: warns" grep -q "no roofline chart" err.txt
check "kernels --svg with no chart to draw: the old file is kept byte for byte" kept nochart.svg
check "kernels --svg with no chart to draw: no temporary file" no_temps

# ---- two `gpuscope trace -o same` at once ----
"$bin" trace -o same -q -- sleep 2 >first.out 2>&1 &
first=$!
for _ in $(seq 50); do [[ -e same.sqlite.lock ]] && break; sleep 0.1; done
"$bin" trace -o same -q -f -- true >second.out 2>&1; rc=$?
check "a second trace -o same (even with -f) refuses at start" test $rc -ne 0
check "...naming the first one's pid and the lock" grep -q "being written by another gpuscope (pid $first.*same.sqlite.lock" second.out
wait $first; rc=$?
check "...and the first one finishes its trace" sh -c "test $rc -eq 0 && test -s same.sqlite && test ! -e same.logs"
check "...and removes its lock" test ! -e same.sqlite.lock
"$bin" trace -o same2 -q -- sleep 2 >/dev/null 2>&1 &
first=$!
for _ in $(seq 50); do [[ -e same2.sqlite.lock ]] && break; sleep 0.1; done
"$bin" import "$src/tests/data/cnn.logs" -o same2 -f >second.out 2>&1; rc=$?
check "an import -o NAME while a trace writes NAME refuses" sh -c "test $rc -ne 0 && grep -q 'being written by another gpuscope' second.out"
wait $first
check "...and the trace is the trace's" test "$(sqlite3 same2.sqlite 'SELECT COUNT(*) FROM kernels')" = 0

# A gpuscope killed mid-run: its lock file stays, but the next run takes it over at once.
"$bin" trace -o crashed -q -- sleep 1 >/dev/null 2>&1 &
victim=$!
for _ in $(seq 50); do [[ -e crashed.sqlite.lock ]] && break; sleep 0.1; done
kill -9 $victim; wait $victim 2>/dev/null
check "a killed gpuscope leaves its lock file" test -e crashed.sqlite.lock
timeout 20 "$bin" trace -o crashed -q -f -- true >again.out 2>&1; rc=$?
check "the next trace -o crashed takes the stale lock over" sh -c "test $rc -eq 0 && test -s crashed.sqlite"
check "...and removes it when done" test ! -e crashed.sqlite.lock
sleep 1  # the killed run's target (sleep 1) ends by itself

echo "$fails failure(s)"
exit $((fails > 0))
