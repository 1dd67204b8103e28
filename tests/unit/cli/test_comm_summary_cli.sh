#!/usr/bin/env bash
# gpuscope comm-summary and gpuscope stats over several inputs (the many-GPU reports as
# map → reduce) on a generated 4-rank job (gpuscope_make_comm_job): the summary of each rank,
# stats over traces, over summaries, over both mixed, and over the one trace agree; what they
# refuse (other reports, filters, -o with several traces, an existing file without -f, a
# summary of another version, an input given twice) they refuse with a message that says what
# to do. Usage: test_comm_summary_cli.sh BUILD_DIR
set -uo pipefail
build="$(cd "$1" && pwd)"
G="$build/bin/gpuscope"
. "$(dirname "$0")/check_lib.sh"  # check NAME CONDITION..., $fails
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fails_with() {  # fails_with TEXT CMD...: CMD exits non-zero and says TEXT on stderr
  local text=$1; shift
  "$@" >out.txt 2>err.txt && return 1
  grep -qF -- "$text" err.txt || { cat err.txt; return 1; }
}
"$build/bin/gpuscope_make_comm_job" job 4 3 2 1 >/dev/null
R=nccl_sum,comm_overlap,rank_sum,stragglers,collective_trace

check "comm-summary writes one summary" "$G" comm-summary job/rank0.sqlite -o r0.json
check "...a versioned JSON document" grep -q '"format":"gpuscope-comm-summary","version":1' r0.json
check "comm-summary --dir writes NAME.summary.json of each" "$G" comm-summary job/rank*.sqlite --dir sums -j 2
check "...four of them" test "$(ls sums/*.summary.json | wc -l)" = 4
"$G" stats job/job.sqlite -r "$R" --format csv >one.csv
"$G" stats job/rank*.sqlite -r "$R" --format csv -j 2 >traces.csv
"$G" stats sums/*.summary.json -r "$R" --format csv >sums.csv
"$G" stats sums/rank0.summary.json sums/rank1.summary.json job/rank2.sqlite job/rank3.sqlite -r "$R" --format csv >mixed.csv
check "stats over rank traces = over their summaries" cmp -s traces.csv sums.csv
check "...= over summaries and traces mixed" cmp -s traces.csv mixed.csv
# The one trace has no host in meta: the same reports but the note on the per-rank files'
# two hosts' clocks (node0 only: 4 ranks on one node, so no note at all here).
check "...= the one trace's" cmp -s traces.csv one.csv
check "stats over several inputs runs the five reports without -r" \
  bash -c "'$G' stats sums/*.summary.json | grep -c '^[A-Za-z].*(\(nccl_sum\|comm_overlap\|rank_sum\|stragglers\|collective_trace\))$' | grep -qx 5"
check "one summary alone takes the map → reduce path" bash -c "'$G' stats sums/rank0.summary.json -r rank_sum | grep -q 'Rank Summary'"
check "stragglers over summaries names rank 2" \
  bash -c "'$G' stats sums/*.summary.json -r stragglers | grep -q 'rank 2 holds the job back'"
check "another report over several inputs is refused, naming those that run" \
  fails_with "over several traces or summaries these run: nccl_sum, comm_overlap" "$G" stats job/rank*.sqlite -r cuda_gpu_kern_sum
check "filters over several inputs are refused" fails_with "filters and --whole-run need one trace" \
  "$G" stats job/rank*.sqlite -r rank_sum --from 1ms
check "comm-summary -o with several traces is refused" fails_with "use --dir DIR" \
  "$G" comm-summary job/rank0.sqlite job/rank1.sqlite -o x.json
check "comm-summary keeps an existing summary without -f" fails_with "force" "$G" comm-summary job/rank0.sqlite -o r0.json
check "...and replaces it with -f" "$G" comm-summary job/rank0.sqlite -o r0.json -f
check "comm-summary of a summary is refused" fails_with "already a summary" "$G" comm-summary r0.json -o r00.json
sed 's/"version":1/"version":7/' r0.json >v7.json
check "a summary of another version is refused, naming both" \
  fails_with "comm summary version 7, this gpuscope reads version 1" "$G" stats v7.json r0.json
check "an input given twice is refused" fails_with "is given twice" "$G" stats r0.json r0.json
check "stats --help teaches several inputs" bash -c "'$G' stats --help | grep -q 'gpuscope stats node\*.summary.json -r stragglers'"
check "comm-summary --help teaches" bash -c "'$G' comm-summary --help | grep -q 'gpuscope comm-summary run.node1.3.sqlite -o rank3.summary.json'"
echo "$fails failure(s)"
[ "$fails" -eq 0 ]
