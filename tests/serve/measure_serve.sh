#!/bin/bash
# gpuscope bench serve against tests/serve/mock_server.py, compared with the server's own
# log request by request (compare_serve.py): the figures of docs/validation.md, "bench serve
# vs the server's log". A benchmark, not a test: run it on an idle machine.
#
#   tests/serve/measure_serve.sh BUILD_DIR [RUNS=3] [REQUESTS=40]
#
# For each concurrency (1 and 8) and run: 40 requests of 20 tokens (TTFT 30 ms, TPOT 10 ms
# on the server's schedule), warm-up = concurrency (so every connection is open before the
# measured requests), then compare_serve.py's mean and per-request differences in ms.
set -eu
BUILD=$1
RUNS=${2:-3}
REQUESTS=${3:-40}
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d /tmp/gpuscope-serve-measure.XXXXXX)
python3 "$HERE/mock_server.py" --port-file "$D/port" --log "$D/log.jsonl" --ttft-ms 30 --tpot-ms 10 >/dev/null &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 200); do [ -s "$D/port" ] && break; sleep 0.05; done
URL=http://127.0.0.1:$(cat "$D/port")
for c in 1 8; do
  for r in $(seq "$RUNS"); do
    : >"$D/log.jsonl"
    "$BUILD/bin/gpuscope" bench serve --url "$URL" --num-requests "$REQUESTS" --concurrency "$c" --warmup "$c" \
      --input-len 16 --output-len 20 --json "$D/c$c-$r.json" --requests-log "$D/req-c$c-$r.jsonl" -f >/dev/null 2>&1
    echo "== concurrency $c, run $r"
    python3 "$HERE/compare_serve.py" --server-log "$D/log.jsonl" --json "$D/c$c-$r.json" \
      --requests "$D/req-c$c-$r.jsonl" --skip "$c" || true
  done
done
echo "(files in $D)"
