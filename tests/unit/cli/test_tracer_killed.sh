#!/usr/bin/env bash
# The tracer's own death: `gpuscope trace` is SIGKILLed (as by the OOM killer or a batch
# system's time limit killing the process group) while its target runs. The per-process
# event logs and run.json stay in NAME.logs/; a new `trace -o NAME` refuses and prints the
# import command; `gpuscope import NAME.logs -o NAME` recovers every record the target had
# written, with the command line from run.json. No GPU needed: the target is
# fake_collector_target, which writes its log as the collector does.
# Usage: test_tracer_killed.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
bin="$build/bin/gpuscope"
target="$build/bin/fake_collector_target"
work=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export GPUSCOPE_SKIP_DRIVER_CHECK=1
cd "$work"

kernels=1500
setsid "$bin" trace -o run --calibrate=never -- "$target" "$kernels" "$work/ready" > trace.out 2>&1 &
launcher=$!
for _ in $(seq 1 200); do [[ -e ready ]] && break; sleep 0.05; done
[[ -e ready ]] || { cat trace.out; echo "FAIL target never became ready"; exit 1; }
kill -9 -- "-$launcher"   # the whole process group: gpuscope and its target
wait "$launcher" 2>/dev/null || true
[[ ! -e run.sqlite ]] || { echo "FAIL a trace appeared although gpuscope was killed"; exit 1; }
ls run.logs/*.gslog run.logs/run.json > /dev/null
echo "ok   the event logs and run.json outlive the killed tracer"

if "$bin" trace -o run --calibrate=never -- /bin/true > again.out 2>&1; then
  echo "FAIL trace -o run ran over the orphaned logs"; exit 1
fi
grep -q "gpuscope import $work/run.logs -o run" again.out || { cat again.out; echo "FAIL no import command"; exit 1; }
echo "ok   a new trace -o run refuses and prints the import command"

"$bin" import run.logs -o run > import.out 2>&1 || { cat import.out; exit 1; }
python3 - "$work/run.sqlite" "$kernels" "$target" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
want = int(sys.argv[2])
one = lambda q: db.execute(q).fetchone()[0]
assert one("SELECT COUNT(*) FROM kernels") == want, one("SELECT COUNT(*) FROM kernels")
assert one("SELECT COUNT(*) FROM api_calls") == want, one("SELECT COUNT(*) FROM api_calls")
meta = dict(db.execute("SELECT key, value FROM meta"))
assert sys.argv[3] in meta["command"] and meta["command"].endswith(f" {want} {sys.argv[1].rsplit('/', 1)[0]}/ready"), meta["command"]
assert int(meta["launched_pid"]) > 0, meta["launched_pid"]
PY
echo "ok   gpuscope import recovers all $kernels kernels and launch calls, and the command from run.json"
