#!/usr/bin/env bash
# Benchmark, not a test (docs/performance.md, "gpuscope report"): `gpuscope report` of a
# synthetic trace of LAUNCHES kernel launches (gpuscope_make_trace; 500,000 → about 1.02M
# events): wall time, CPU time and peak resident memory (/usr/bin/time -v), and the HTML's
# size; the same with --no-timeline. Targets (issue 19): under 3 s on 2 cores, at most 10 MB.
# The machine's load average is printed beside them: on a shared machine wall time follows it.
# Usage: bench_report.sh BUILD_DIR [LAUNCHES] [WORK_DIR]
set -euo pipefail
build="$(cd "$1" && pwd)"
launches="${2:-500000}"
work="${3:-$(mktemp -d)}"
mkdir -p "$work"
trace="$work/report_bench_${launches}.sqlite"
if [ ! -f "$trace" ]; then
  "$build/bin/gpuscope_make_trace" "$trace" --launches "$launches" > "$work/counts.json"
fi
echo "trace: $trace ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
measure() {  # NAME ARGS...
  local name="$1"
  shift
  /usr/bin/time -v "$build/bin/gpuscope" report "$trace" -o "$work/$name.html" -f "$@" 2> "$work/$name.time"
  local wall user sys rss size
  wall=$(grep "Elapsed (wall clock)" "$work/$name.time" | awk '{print $NF}')
  user=$(grep "User time" "$work/$name.time" | awk '{print $NF}')
  sys=$(grep "System time" "$work/$name.time" | awk '{print $NF}')
  rss=$(grep "Maximum resident set size" "$work/$name.time" | awk '{print $NF}')
  size=$(stat -c %s "$work/$name.html")
  printf '%-12s wall %8s  cpu %5.2f s (user %s, sys %s)  peak RSS %4d MB  html %6.2f MB\n' "$name" "$wall" \
    "$(echo "$user + $sys" | bc -l)" "$user" "$sys" $((rss / 1024)) "$(echo "$size / 1000000" | bc -l)"
}
measure report
measure no-timeline --no-timeline
