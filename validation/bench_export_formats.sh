#!/usr/bin/env bash
# Benchmark, not a test (docs/performance.md, "Perfetto protobuf export"): a synthetic trace
# of LAUNCHES kernel launches (gpuscope_make_trace; 2,500,000 → about 5.1M events) exported
# as Chrome JSON (--format perfetto) and as Perfetto's protobuf (--format pftrace): wall
# time and peak resident memory (/usr/bin/time -v) and the file sizes. Targets for the
# pftrace: at least 5x smaller than the JSON, under 10 s and under 500 MB. Also prints the CPU
# time (user + system of both threads: export reads a batch ahead on a second thread), which
# a machine loaded by other work inflates far less than the wall time.
# Usage: bench_export_formats.sh BUILD_DIR [LAUNCHES] [WORK_DIR]
set -euo pipefail
build="$(cd "$1" && pwd)"
launches="${2:-2500000}"
work="${3:-$(mktemp -d)}"
mkdir -p "$work"
trace="$work/big.sqlite"
if [ ! -f "$trace" ]; then
  "$build/bin/gpuscope_make_trace" "$trace" --launches "$launches"
fi
measure() {  # NAME FORMAT OUTPUT
  /usr/bin/time -v "$build/bin/gpuscope" export "$trace" --format "$2" -o "$3" -f 2> "$work/$1.time" > /dev/null
  local wall cpu rss size
  wall=$(grep "Elapsed (wall clock)" "$work/$1.time" | awk '{print $NF}')
  # CPU time (user + system, all threads): what a loaded machine's wall time hides.
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$work/$1.time")
  rss=$(grep "Maximum resident set size" "$work/$1.time" | awk '{print $NF}')
  size=$(stat -c %s "$3")
  printf '%-9s time %8s  CPU %6s s  peak RSS %6d MB  file %8.1f MB\n' "$1" "$wall" "$cpu" $((rss / 1024)) \
    "$(echo "$size / 1000000" | bc -l)"
  echo "$size" > "$work/$1.size"
}
measure json perfetto "$work/big.perfetto.json"
measure pftrace pftrace "$work/big.pftrace"
echo "pftrace is $(echo "$(cat "$work/json.size") / $(cat "$work/pftrace.size")" | bc -l | cut -c1-5)x smaller than the JSON"
