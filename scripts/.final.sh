set -o pipefail
B=$PWD/build-gpu
pass=0; fail=0; failed=""
for t in tests/gpu/test_*.py; do
  n=$(basename $t .py)
  if python3 $t --build $B --scratch /tmp/s/$n > /tmp/s.$n.log 2>&1; then pass=$((pass+1)); echo "PASS $n: $(grep -E '^== .*checks passed' /tmp/s.$n.log | tail -1)"; else fail=$((fail+1)); failed="$failed $n"; echo "FAIL $n"; tail -20 /tmp/s.$n.log; fi
done
echo "GPU TESTS: $pass passed, $fail failed$failed"
cd /tmp && $B/bin/gpuscope trace -o cnn -f --capture-range=cudaProfilerApi -- python3 /work/main/examples/pytorch/cnn_train.py 2>&1 | tail -8
$B/bin/gpuscope stats cnn.sqlite --report nvtx_sum,cuda_gpu_mem_size_sum 2>&1 | tail -14
$B/bin/gpuscope export cnn.sqlite -o cnn.json 2>&1; ls -la cnn.json
