#!/usr/bin/env bash
# End-to-end checks of the gpuscope CLI that need no GPU: bad input is refused
# clearly, exit codes pass through, nothing is clobbered, a target that never
# uses CUDA gives an empty but valid trace. Usage: test_cli.sh BUILD_DIR
set -uo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
here="$(cd "$(dirname "$0")" && pwd)"
. "$(dirname "$0")/check_lib.sh"  # check NAME CONDITION..., $fails
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
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
check "empty trace says nothing was recorded (no invented wall time)" grep -qi "no events were recorded" sum.txt

"$bin" trace -o t4 --capture-range=nvtx -- true 2>err.txt; rc=$?
check "nvtx capture without a range is refused" test $rc -ne 0

# Durations that do not fit the collector's ns counters are refused before anything runs.
for bad in nan inf -1 1e308 30x; do
  "$bin" trace -o t5 --duration "$bad" -- true 2>err.txt; rc=$?
  check "--duration $bad is refused" test $rc -ne 0 -a ! -e t5.sqlite
  check "--duration $bad error names the option" grep -q -- "--duration" err.txt
done
"$bin" trace -o t5 --delay nan -- true 2>err.txt; rc=$?
check "--delay nan is refused" test $rc -ne 0

echo "not a database" > bad.sqlite
"$bin" summary bad.sqlite 2>err.txt; rc=$?
check "non-trace file refused" test $rc -ne 0
check "non-trace file error is clear" grep -qi "trace" err.txt

"$bin" trace --help >help.txt; rc=$?
check "--help works" test $rc -eq 0
check "--help teaches capture ranges" grep -q "cudaProfilerApi" help.txt
check "--help says the default PyTorch hooks and --pytorch=none" sh -c 'grep -q "optimizer.step() marks a training step" help.txt && grep -q "none: neither" help.txt'

# gpuscope's Python hooks (collect/python/sitecustomize.py): steps and generate() by default on
# every traced command, more with --pytorch, none with --pytorch=none or without -t nvtx.
hooks_seen() {  # hooks_seen NAME OPTIONS...: what a traced Python sees: GPUSCOPE_PYTORCH and the hooks module
  "$bin" trace -o "$1" -f -q "${@:2}" -- python3 -c 'import os, sys
print(os.environ.get("GPUSCOPE_PYTORCH"), hasattr(sys.modules.get("sitecustomize"), "installed"),
      "torch" in sys.modules)' 2>err.txt
}
meta_pytorch() { sqlite3 "$1.sqlite" "SELECT value FROM meta WHERE key='pytorch'"; }
check "by default: steps and generate hooks, torch not imported" test "$(hooks_seen h1)" = "steps,generate True False"
check "by default: the trace's meta says which hooks" test "$(meta_pytorch h1)" = "steps,generate"
check "--pytorch=ops adds to the defaults" test "$(hooks_seen h2 --pytorch=ops,modules)" = "steps,generate,ops,modules True False"
check "--pytorch=none: no hooks" test "$(hooks_seen h3 --pytorch=none)" = "None False False"
check "--pytorch=none: meta says none" test "$(meta_pytorch h3)" = "none"
check "-t cuda: no hooks (their marks need NVTX)" test "$(hooks_seen h4 -t cuda)" = "None False False"
"$bin" trace -o h5 --pytorch=none,ops -- true 2>err.txt; rc=$?
check "--pytorch=none with another hook is refused" sh -c "test $rc -ne 0 && grep -q 'name it alone' err.txt && test ! -e h5.sqlite"

# gpuscope stats: options, filters and their errors, on the committed trace.
cnn="$(cd "$1" && pwd)/test-data/cnn.sqlite"  # imported from tests/data/cnn.logs at build time
check "committed trace found" test -s "$cnn"
st() { "$bin" stats "$cnn" "$@"; }
sum_col() {  # sum_col FILE HEADER: sum of that csv column (no quoted commas in numbers)
  python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(sum(float(x[sys.argv[2]]) for x in r))' "$1" "$2"
}

"$bin" stats --help >help.txt; rc=$?
check "stats --help works" test $rc -eq 0
check "stats --help explains the filters" grep -q -- "--filter-nvtx step" help.txt
check "stats --help has examples" grep -q "gpuscope stats run.sqlite -r cuda_gpu_kern_sum --top 5" help.txt
check "stats --help describes every report" sh -c '! grep -q "(no description)" help.txt'
check "stats --help lists gpu_util" grep -q "gpu_util  .*SM coverage" help.txt

st -r nope 2>err.txt; rc=$?
check "unknown report refused" test $rc -ne 0
check "unknown report lists the valid ones" grep -q "unknown report 'nope' (valid: .*cuda_gpu_kern_sum" err.txt
st --from 2x 2>err.txt; rc=$?
check "bad time refused" test $rc -ne 0
check "bad time error says what works" grep -q "\-\-from: '2x' is not a duration (unknown unit 'x'.*250ms" err.txt
st --from 2s --to 1s 2>err.txt; rc=$?
check "--from after --to refused" grep -q -- "--from 2s is after --to 1s" err.txt
st --timeunit min 2>err.txt; rc=$?
check "bad --timeunit refused" grep -q "unknown time unit 'min' (valid: ns, us, ms, s)" err.txt
st -r cuda_api_sum --sort Calls 2>err.txt; rc=$?
check "unknown --sort column refused" test $rc -ne 0
check "--sort error lists the columns" grep -q "no such column (cuda_api_sum: .*'Num Calls'" err.txt

st -r cuda_gpu_kern_sum --filter-nvtx step 2>err.txt >out.txt; rc=$?
check "NVTX filter matching nothing is not an error" test $rc -eq 0
check "...but warns with the ranges seen" grep -q "no NVTX range 'step' in the trace; ranges seen: 'step 10' (1)" err.txt
check "...and the report is empty" grep -q "no CUDA kernels in the capture range" out.txt
pid=$(sqlite3 "$cnn" "SELECT pid FROM processes")
st -r cuda_api_sum --process 4242 2>err.txt >/dev/null
check "unknown --process warns with the pids" grep -q "no process 4242 in the trace; processes: $pid (python3 " err.txt
st -r cuda_api_sum --device 7 2>err.txt >/dev/null
check "unknown --device warns with the GPUs" grep -q "no GPU 7 in the trace; GPUs: 0 (NVIDIA H100 80GB HBM3)" err.txt

st -r cuda_gpu_kern_sum --filter-nvtx 'step 7' --format csv >nvtx.csv 2>err.txt; rc=$?
want=$(sqlite3 "$cnn" "SELECT COUNT(*) FROM kernels k JOIN api_calls a ON a.pid = k.pid AND
  a.correlation_id = k.correlation_id JOIN v_nvtx n ON n.pid = a.pid WHERE n.text = 'step 7' AND
  a.start_ns >= n.start_ns AND a.end_ns <= n.end_ns")
check "--filter-nvtx keeps the kernels launched inside (any thread)" test "$(sum_col nvtx.csv Instances)" = "$want.0"
check "...which includes the autograd thread's" test "$want" -gt 25
st -r cuda_gpu_kern_sum --filter-nvtx 'step *' --format csv >all_steps.csv
st -r cuda_gpu_kern_sum --filter-nvtx 'step */3' --format csv >third.csv
check "--filter-nvtx glob takes every step" test "$(sum_col all_steps.csv Instances)" = "$(sqlite3 "$cnn" "SELECT COUNT(*) FROM kernels").0"
check "--filter-nvtx /3 takes one step" test "$(sum_col third.csv Instances)" = "$want.0"

st -r cuda_api_sum --from 5ms --to 6ms --format csv >win.csv
t0=$(sqlite3 "$cnn" "SELECT MIN(start_ns) FROM capture_windows")
want=$(sqlite3 "$cnn" "SELECT COUNT(*) FROM api_calls WHERE start_ns <= $t0 + 6000000 AND end_ns >= $t0 + 5000000")
check "--from/--to keep the API calls overlapping the window" test "$(sum_col win.csv 'Num Calls')" = "$want.0"

st -r cuda_api_sum,cuda_gpu_kern_sum --format csv --whole-run >plain.csv  # filters judge no window
st -r cuda_api_sum,cuda_gpu_kern_sum --format csv --process "$pid" --device 0 --from 0 >same.csv
check "filters that keep everything change nothing" sh -c 'test -s plain.csv && cmp -s plain.csv same.csv'

st -r cuda_api_sum --top 2 --format csv >top.csv
check "--top 2 keeps two rows" test "$(wc -l <top.csv)" -eq 3
st -r cuda_api_sum --sort 'Num Calls' --format csv >sorted.csv
check "--sort orders by the column, descending" python3 -c '
import csv,sys; n=[int(r["Num Calls"]) for r in csv.DictReader(open("sorted.csv"))]; sys.exit(len(n) < 5 or n != sorted(n, reverse=True))'
st -r cuda_gpu_kern_sum --timeunit us --format csv >us.csv
check "--timeunit us renames the unit" grep -q "^Time (%),Total Time (us),Instances,Avg (us)" us.csv
st -r cuda_gpu_kern_sum --format csv >ns.csv
check "--timeunit us divides by 1000" python3 -c '
import csv,sys; n=list(csv.DictReader(open("ns.csv"))); u=list(csv.DictReader(open("us.csv")))
sys.exit(len(n) != len(u) or any(abs(float(b["Avg (us)"]) * 1000 - float(a["Avg (ns)"])) > 1e-6 for a, b in zip(n, u)))'
# Identifiers of 7 digits (the recording's are below 1,000): a copy with correlation ids moved up.
cp "$cnn" big_ids.sqlite && sqlite3 big_ids.sqlite "UPDATE api_calls SET correlation_id = correlation_id + 1000000"
"$bin" stats big_ids.sqlite -r cuda_api_trace --top 3 >ids.txt
first=$(sqlite3 "$cnn" "SELECT correlation_id + 1000000 FROM api_calls ORDER BY start_ns LIMIT 1")
check "identifier columns have no thousands separators" sh -c "grep -qE '  $first  $pid  $pid\$' ids.txt && ! grep -q '1,000,' ids.txt"

# gpuscope peak: no GPU (hidden with CUDA_VISIBLE_DEVICES, so this holds on the GPU machine
# too) is a clear error with exit code 3; --methods and --help need no GPU; docs/metrics.md
# embeds the --methods text.
CUDA_VISIBLE_DEVICES= "$bin" peak --no-save >out.txt 2>err.txt; rc=$?
check "peak without a GPU exits 3" test $rc -eq 3
check "peak without a GPU says so" grep -qi "gpu" err.txt
check "peak without a GPU prints no table" test ! -s out.txt
"$bin" peak --format nonsense --no-save >/dev/null 2>err.txt; rc=$?
check "peak --format nonsense exits 2 before touching the GPU" test $rc -eq 2
"$bin" peak --reference nonsense --no-save >/dev/null 2>err.txt; rc=$?
check "peak --reference nonsense exits 2 before touching the GPU" sh -c "test $rc -eq 2 && grep -q 'auto, torch or none' err.txt"
"$bin" peak --methods >methods.md; rc=$?
check "peak --methods exits 0" test $rc -eq 0
check "peak --methods lists every ceiling" sh -c 'test "$(grep -c "^### " methods.md)" -eq 26'
check "docs/metrics.md holds the current --methods text" python3 -c '
import sys; sys.exit(open("methods.md").read() not in open(sys.argv[1]).read())' "$here/../../../docs/metrics.md"
"$bin" peak --help >help.txt 2>&1
check "peak --help lists the ceilings" sh -c 'grep -q "dram_copy" help.txt && grep -q "tensor_bf16" help.txt'

# gpuscope bench: list, report and compare need no GPU; `bench OP` without a GPU (hidden
# with CUDA_VISIBLE_DEVICES, so this holds on the GPU machine too) is a clear error.
data="$here/../../data"
"$bin" bench list >list.txt 2>err.txt; rc=$?
check "bench list exits 0" test $rc -eq 0
check "bench list names every operator" sh -c 'for op in vector_add square relu copy mean softmax transpose gemm linear_small; do grep -q "^$op " list.txt || exit 1; done'
"$bin" bench list mean >mean.md; rc=$?
check "bench list OP explains the variants" sh -c "test $rc -eq 0 && grep -q warp_shuffle_vec4 mean.md && grep -q 'reference check' mean.md"
CUDA_VISIBLE_DEVICES= "$bin" bench copy --sizes 2^20 >out.txt 2>err.txt; rc=$?
check "bench OP without a GPU exits 1" test $rc -eq 1
check "bench OP without a GPU says so and what works without one" sh -c 'grep -qi "no usable CUDA GPU\|no CUDA-capable GPU" err.txt && grep -q "bench compare" err.txt'
check "bench OP without a GPU prints no table" test ! -s out.txt
"$bin" bench no_such_op >/dev/null 2>err.txt; rc=$?
check "bench unknown operator exits 2 and lists the valid ones" sh -c "test $rc -eq 2 && grep -q 'linear_small' err.txt"
CUDA_VISIBLE_DEVICES= "$bin" bench copy --sizes 2^30:2^20 >/dev/null 2>err.txt; rc=$?
check "bench bad --sizes exits 2 before touching the GPU" sh -c "test $rc -eq 2 && grep -q -- '--sizes' err.txt"
CUDA_VISIBLE_DEVICES= "$bin" bench gemm --dtype f64 >/dev/null 2>err.txt; rc=$?
check "bench bad --dtype exits 2" test $rc -eq 2
"$bin" bench report "$data/bench-copy-sweep.json" --svg sweep.svg --csv sweep.csv --format csv >report.csv 2>err.txt; rc=$?
check "bench report exits 0" test $rc -eq 0
check "bench report draws the sweep with its ceiling" sh -c 'grep -q "id=\"ceiling-dram_copy\"" sweep.svg && grep -q "</svg>" sweep.svg'
check "bench report writes one CSV row per case" test "$(wc -l <sweep.csv)" -eq 15
check "bench report prints where each sweep reaches 90 %" grep -q "n=16777216" report.csv
"$bin" bench compare "$data/bench-copy-sweep.json" "$data/bench-copy-new.json" --format csv >cmp.csv 2>err.txt; rc=$?
check "bench compare exits 0" test $rc -eq 0
check "bench compare verdicts" sh -c 'test "$(grep -c ",faster$" cmp.csv)" -eq 1 && test "$(grep -c ",slower$" cmp.csv)" -eq 1 && test "$(grep -c ",same$" cmp.csv)" -eq 11'
"$bin" bench compare "$data/bench-copy-sweep.json" missing.json >/dev/null 2>err.txt; rc=$?
check "bench compare with a missing file exits 2 and names it" sh -c "test $rc -eq 2 && grep -q missing.json err.txt"
"$bin" bench --help >help.txt 2>&1
check "bench --help teaches the modes with examples" sh -c 'grep -q "graph:" help.txt && grep -q "gpuscope bench compare" help.txt'

# gpuscope kernels without a GPU: the host API knows the metrics; nothing runs by mistake.
"$bin" kernels --list-sets --format csv >sets.csv 2>err.txt; rc=$?
check "kernels --list-sets lists every set's metrics" sh -c "test $rc -eq 0 && grep -q '^metric_set_quick,dram__bytes_read.sum,bytes' sets.csv && grep -q smsp__sass_thread_inst_executed_op_ffma_pred_on.sum sets.csv"
"$bin" kernels --list-metrics dram__bytes_read --chip GH100 >metrics.txt 2>err.txt; rc=$?
check "kernels --list-metrics FILTER --chip GH100 needs no GPU" sh -c "test $rc -eq 0 && grep -q '^dram__bytes_read.sum' metrics.txt"
"$bin" kernels --list-metrics dram__bytes_read >metrics.txt 2>err.txt; rc=$?
check "kernels --list-metrics without a GPU or --chip says to name the chip" sh -c "test $rc -eq 1 && grep -q -- '--chip GH100' err.txt"
"$bin" kernels --chip GH100 --metrics dram__byte_read.sum -o k1 -- true 2>err.txt; rc=$?
check "kernels: an unknown metric exits 1 before running, naming the closest" sh -c "test $rc -eq 1 && grep -q 'dram__bytes_read.sum' err.txt && test ! -e k1.sqlite"
"$bin" kernels --set nosuchset -o k2 -- true 2>err.txt; rc=$?
check "kernels: an unknown --set lists the sets" sh -c "test $rc -eq 1 && grep -q 'roofline' err.txt"
"$bin" kernels -k '(' -o k3 -- true 2>err.txt; rc=$?
check "kernels: a bad -k regex is refused" sh -c "test $rc -eq 1 && grep -q 'not a valid regex' err.txt"
"$bin" kernels --chip GH100 -o k4 -- sh -c 'exit 3' 2>err.txt; rc=$?
check "kernels: the target's exit code passes through, with the pass count said" sh -c "test $rc -eq 3 && grep -q '1 replay pass' err.txt && test -f k4.sqlite"
"$bin" kernels --chip GH100 --set roofline --replay-mode none -o k5 -- true 2>err.txt; rc=$?
check "kernels: --replay-mode none refuses a several-pass set before running" sh -c "test $rc -eq 1 && grep -q 'need 3 passes' err.txt && grep -q -- '--replay-mode kernel' err.txt && test ! -e k5.sqlite"
"$bin" kernels --chip GH100 --replay-mode none -o k6 -- sh -c 'exit 0' 2>err.txt; rc=$?
check "kernels: --replay-mode none runs a one-pass set and says what it adds" sh -c "test $rc -eq 0 && grep -q '1 pass, no replay' err.txt && grep -q '8 instructions per warp' err.txt"
"$bin" kernels --chip GH100 --cache-control all --replay-mode none -o k7 -- true 2>err.txt; rc=$?
check "kernels: --cache-control all with --replay-mode none is refused before running" sh -c "test $rc -eq 1 && grep -q 'needs a replay' err.txt && test ! -e k7.sqlite"
"$bin" kernels --chip GH100 --cache-control all --set detailed -o k8 -- true 2>err.txt; rc=$?
check "kernels: --cache-control all refuses SASS-patched metrics before running" sh -c "test $rc -eq 1 && grep -q 'cannot collect smsp__sass_' err.txt && grep -q -- '--cache-control none' err.txt && test ! -e k8.sqlite"
"$bin" kernels --chip GH100 --cache-control all --set memory -o k9 -- sh -c 'exit 0' 2>err.txt; rc=$?
check "kernels: --cache-control all says every pass starts from the saved memory and an empty L2" sh -c "test $rc -eq 0 && grep -q '4 pass(es) per profiled kernel, each from the same saved memory after an L2 flush' err.txt && grep -q '8 instructions per warp' err.txt"
"$bin" kernels --help >help.txt 2>&1
check "kernels --help teaches with examples" sh -c 'grep -q -- "--list-metrics" help.txt && grep -q "gpuscope kernels --set roofline" help.txt'

echo "$fails failure(s)"
exit $((fails > 0))
