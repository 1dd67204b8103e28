#!/bin/bash
# gpuscope bench serve against tests/serve/mock_server.py, compared with the server's own
# log request by request (compare_serve.py): the figures of docs/validation.md, "bench serve
# vs the server's log". A benchmark, not a test: run it on an idle machine.
#
#   tests/serve/measure_serve.sh BUILD_DIR [RUNS=3] [REQUESTS=40]
#   SERVER_ARGS='--model gpt2-small' tests/serve/measure_serve.sh BUILD_DIR [RUNS] [REQUESTS]
#
# For each concurrency (1 and 8) and run: 40 requests of 20 tokens (TTFT 30 ms, TPOT 10 ms
# on the server's schedule), warm-up = concurrency (so every connection is open before the
# measured requests), then compare_serve.py's mean and per-request differences in ms.
# SERVER_ARGS are added to the server's command line: with --model gpt2-small (GPU) the
# tokens are a real model's, generated as the requests come (the schedule is then unused);
# the server builds and warms up its model before it announces its port (up to 5 minutes).
set -eu
BUILD=$1
RUNS=${2:-3}
REQUESTS=${3:-40}
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d /tmp/gpuscope-serve-measure.XXXXXX)
SERVER_ARGS=${SERVER_ARGS:-}
# shellcheck disable=SC2086 # SERVER_ARGS is a list of arguments
python3 "$HERE/mock_server.py" --port-file "$D/port" --log "$D/log.jsonl" --ttft-ms 30 --tpot-ms 10 $SERVER_ARGS \
  >/dev/null 2>"$D/server.err" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 6000); do
  [ -s "$D/port" ] && break
  if ! kill -0 "$SERVER" 2>/dev/null; then
    echo "measure_serve.sh: the server exited before announcing its port:" >&2
    cat "$D/server.err" >&2
    exit 2
  fi
  sleep 0.05
done
if [ ! -s "$D/port" ]; then
  echo "measure_serve.sh: the server announced no port in 5 minutes ($D/server.err)" >&2
  exit 2
fi
echo "server: mock_server.py ${SERVER_ARGS:-(the schedule: TTFT 30 ms, TPOT 10 ms)}"
[ -s "$D/server.err" ] && cat "$D/server.err"
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
