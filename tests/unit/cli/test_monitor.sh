#!/usr/bin/env bash
# gpuscope monitor without a GPU: the screen driven by a recorded sample stream (--replay, the
# fake source) in tmux (send-keys, capture-pane) at 80 and 200 columns, its keys, the line mode,
# the json document, --record into a trace that stats and export read, and the no-GPU message
# and exit code (this machine has no GPU).
# Usage: test_monitor.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
rec="$src/tests/data/monitor/two_gpus.json"
busy="$src/tests/data/monitor/counters_busy.json"
work=$(mktemp -d)
sock="gpuscope-monitor-test-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v tmux >/dev/null || fail "tmux is not installed (scripts/install-deps)"

# --- the screen in tmux --------------------------------------------------------------------
pane() { tmux -L "$sock" capture-pane -p -t mon; }
wait_for() {  # text, seconds
  for _ in $(seq 1 $(( $2 * 10 ))); do pane | grep -qF -- "$1" && return 0; sleep 0.1; done
  pane; fail "the screen never showed '$1'"
}
for width in 80 200; do
  tmux -L "$sock" new-session -d -s mon -x "$width" -y 45 \
    "LANG=C.UTF-8 TERM=xterm-256color $bin monitor --replay $rec --interval 0.1; echo EXITED \$?; sleep 30"
  wait_for "SM active" 10
  sleep 0.6  # a few frames: sparklines
  screen=$(pane)
  echo "$screen" > "$work/screen-$width.txt"
  for text in "gpuscope monitor" "GPU 0  NVIDIA H100 80GB HBM3" "GPU 1  NVIDIA H100 80GB HBM3" "SM active" \
              "NVML util" "warps active" "tensor active" "DRAM" "PCIe" "NVLink" "MHz" " W " "°C" "mem " \
              "alice" "python3 train.py" "./one_block_loop" "█"; do
    grep -qF -- "$text" <<<"$screen" || { echo "$screen"; fail "width $width: no '$text'"; }
  done
  # No line wider than the terminal (tmux wraps none: compare each line's columns).
  python3 - "$work/screen-$width.txt" "$width" <<'PY' || fail "width $2: a line is too wide"
import sys
w = int(sys.argv[2])
for line in open(sys.argv[1], encoding="utf-8"):
    assert len(line.rstrip("\n")) <= w, line
PY
  if [ "$width" = 200 ]; then
    grep -qF "time any kernel ran (nvidia-smi)" <<<"$screen" || fail "200 columns: NVML's row does not say what it counts"
    grep -qF "% of measured 3 TB/s" <<<"$screen" || fail "200 columns: DRAM share of the measured ceiling missing"
  fi
  # Keys: pause, GPU pick, all, rate, quit.
  tmux -L "$sock" send-keys -t mon p;  wait_for "PAUSED" 5
  tmux -L "$sock" send-keys -t mon p;  sleep 0.3; pane | grep -qF PAUSED && fail "p did not resume"
  tmux -L "$sock" send-keys -t mon 1;  sleep 0.4
  pane | grep -qF "GPU 0  NVIDIA" && fail "1 did not pick GPU 1"
  pane | grep -qF "GPU 1  NVIDIA" || fail "1 hid GPU 1"
  tmux -L "$sock" send-keys -t mon g;  sleep 0.4   # after the last GPU: all
  pane | grep -qF "GPU 0  NVIDIA" || fail "g after the last GPU did not show all"
  tmux -L "$sock" send-keys -t mon +;  wait_for "every 0.25 s" 5
  tmux -L "$sock" send-keys -t mon -;  wait_for "every 0.1 s" 5
  tmux -L "$sock" send-keys -t mon q;  wait_for "EXITED 0" 5
  tmux -L "$sock" kill-session -t mon
done
echo "screen at 80 and 200 columns, keys: ok"

# --- counters held by another profiler: NVML rows only, said so ------------------------------
tmux -L "$sock" new-session -d -s mon -x 120 -y 30 "LANG=C.UTF-8 $bin monitor --replay $busy --interval 0.1; sleep 30"
wait_for "NVML util" 10
pane | grep -qF "another tool holds the GPU's counters" || fail "the busy-counters note is not on screen"
pane | grep -qF "SM active" && fail "SM active shown without counters"
tmux -L "$sock" kill-session -t mon
echo "counters held elsewhere: ok"

# --- line mode (not a terminal) --------------------------------------------------------------
"$bin" monitor --replay "$rec" --interval 0.1 --duration 1 > "$work/lines.txt"
n=$(grep -c "^t=" "$work/lines.txt")
[ "$n" -ge 12 ] || fail "line mode printed $n lines in 1 s at 0.1 s for 2 GPUs"
grep -q "gpu0 SM active 98 % (NVML util 100 %) warps 22 % tensor" "$work/lines.txt" || { cat "$work/lines.txt"; fail "line mode gpu0"; }
grep -q "gpu1 SM active 0.8 % (NVML util 100 %)" "$work/lines.txt" || fail "line mode: the one-block GPU"
"$bin" monitor --replay "$busy" --interval 0.1 --once > "$work/busy.txt"
grep -q "^note: GPU metrics are off on device 0" "$work/busy.txt" || fail "line mode: no note on the counters"
grep -q "gpu0 NVML util 0.0 % (no counters) 1755 MHz" "$work/busy.txt" || fail "line mode: NVML-only row"
echo "line mode: ok"

# --- json: one document ----------------------------------------------------------------------
"$bin" monitor --replay "$rec" --interval 0.1 --once --format json > "$work/once.json"
"$bin" monitor --replay "$rec" --interval 0.1 --duration 0.5 --format json > "$work/dur.json"
python3 - "$work/once.json" "$work/dur.json" <<'PY' || fail "json"
import json, sys
once = json.load(open(sys.argv[1]))
assert len(once["frames"]) == 1, len(once["frames"])
g = once["frames"][0]["gpus"][0]
assert g["counters"] is True and g["sm_active_pct"] == 0.0 and g["memory_total_bytes"] > 0, g
assert once["gpus"][1]["dram_ceiling_source"] == "theoretical"
dur = json.load(open(sys.argv[2]))
assert 4 <= len(dur["frames"]) <= 6, len(dur["frames"])
assert dur["frames"][-1]["processes"][0]["user"] == "alice"
PY
echo "json: ok"

# --- --record: a trace stats and export read -------------------------------------------------
"$bin" monitor --replay "$rec" --interval 0.1 --duration 1 --record "$work/mon.sqlite" > /dev/null 2> "$work/rec.err"
grep -q "recorded .* frame(s) of 2 GPU(s)" "$work/rec.err" || { cat "$work/rec.err"; fail "--record said nothing"; }
sqlite3 "$work/mon.sqlite" "SELECT count(*) FROM gpu_metrics_sessions" | grep -qx 2 || fail "two sessions expected"
sqlite3 "$work/mon.sqlite" "SELECT round(avg(value),1) FROM v_gpu_metrics WHERE device_id = 1 AND label = 'SM active'" \
  | grep -qx "0.8" || fail "SM active of GPU 1 not recorded"
sqlite3 "$work/mon.sqlite" "SELECT unit FROM gpu_metric_names WHERE name = 'nvml:power.draw'" | grep -qx W \
  || fail "NVML power not recorded in W"
sqlite3 "$work/mon.sqlite" "SELECT count(*) FROM processes WHERE pid IN (4242, 5151)" | grep -qx 2 \
  || fail "the processes NVML saw are not in processes"
"$bin" stats "$work/mon.sqlite" -r gpu_metrics_sum > "$work/sum.txt" 2>&1 || { cat "$work/sum.txt"; fail "stats -r gpu_metrics_sum"; }
"$bin" export "$work/mon.sqlite" --format perfetto -o "$work/mon.json" > /dev/null 2>&1 || fail "export"
grep -q "SM active" "$work/mon.json" || fail "export has no SM active counter track"
"$bin" monitor --replay "$rec" --once --record "$work/mon.sqlite" > /dev/null 2> "$work/again.err" \
  && fail "--record over an existing file succeeded"
grep -q "exists" "$work/again.err" || fail "--record over an existing file: no clear message"
echo "record: ok"

# --- no GPU on this machine --------------------------------------------------------------------
set +e
"$bin" monitor --once > "$work/nogpu.out" 2> "$work/nogpu.err"
rc=$?
set -e
[ "$rc" = 2 ] || { cat "$work/nogpu.err"; fail "no GPU: exit code $rc, expected 2"; }
grep -q "^gpuscope monitor: no GPU: " "$work/nogpu.err" || { cat "$work/nogpu.err"; fail "no GPU: message"; }
[ ! -s "$work/nogpu.out" ] || fail "no GPU: something on stdout"
echo "no GPU: ok"
echo "PASS"
