// bench_timing_check: the kernels of the timing-agreement check of `scripts/gpu-run bench`
// (validation/bench_check.py), so the same kernel can be timed by gpuscope's engine and, in a
// separate process, by ncu (gpu__time_duration.sum).
//
//   bench_timing_check time small|large   time with the engine; prints one JSON line
//       {"kernel", "n", "mode", "median_s", "min_s", "rel_stderr", "samples", "batch"}
//       small: vector_add grid_stride_vec4 f32, n = 2^18 (~2 µs on an H100), graph mode
//       large: copy grid_stride_vec4 f32, n = 2^27 (1 GiB moved, ~350 µs), cold mode
//   bench_timing_check launch small|large COUNT
//       the same setup, then COUNT plain launches and a synchronize (run under ncu, which
//       times each launch; kernels binary_vec and copy_vec).
// Exits 77 without a usable GPU, 2 on bad arguments, 1 on a CUDA failure or a failed check.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "bench/device_facts.hpp"
#include "bench/ops/operator.hpp"
#include "gpuscope/bench.hpp"

namespace ops = gpuscope::bench::ops;

int main(int argc, char** argv) {
  const std::string action = argc > 1 ? argv[1] : "", kind = argc > 2 ? argv[2] : "";
  if ((action != "time" && action != "launch") || (kind != "small" && kind != "large") ||
      (action == "launch" && argc < 4)) {
    std::fprintf(stderr, "usage: bench_timing_check time small|large | launch small|large COUNT\n");
    return 2;
  }
  if (const std::string problem = gpuscope::bench::cuda_device_problem(0); !problem.empty()) {
    std::fprintf(stderr, "SKIP: %s\n", problem.c_str());
    return 77;
  }
  try {
    const bool small = kind == "small";
    const ops::Operator* op = ops::find_operator(small ? "vector_add" : "copy");
    const std::int64_t n = small ? (std::int64_t{1} << 18) : (std::int64_t{1} << 27);
    const ops::CaseSpec spec{"grid_stride_vec4", ops::DType::kF32, {n}};
    const gpuscope::DeviceFacts facts = gpuscope::bench::query_device_facts(0);
    auto instance = op->setup(spec, ops::SetupContext{0, facts.sm_count});
    if (action == "launch") {
      const int count = std::atoi(argv[3]);
      for (int i = 0; i < count; ++i) instance->enqueue(nullptr);
      GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
    } else {
      gpuscope::bench::TimingOptions t;
      t.mode = small ? gpuscope::bench::Mode::kGraph : gpuscope::bench::Mode::kCold;
      t.budget_s = 2.0;
      t.max_rel_stderr = 0.002;
      t.back_to_back = true;  // as `gpuscope bench` times
      const auto r = gpuscope::bench::time_gpu([&](cudaStream_t s) { instance->enqueue(s); }, t);
      std::printf(
          "{\"kernel\": \"%s\", \"n\": %lld, \"mode\": \"%s\", \"median_s\": %.9g, \"min_s\": %.9g, "
          "\"rel_stderr\": %.6g, \"samples\": %zu, \"batch\": %d}\n",
          small ? "binary_vec" : "copy_vec", static_cast<long long>(n),
          std::string(gpuscope::bench::mode_name(r.mode)).c_str(), r.median_s, r.min_s, r.rel_stderr,
          r.samples_s.size(), r.batch);
    }
    const ops::Verification v = instance->verify();
    if (!v.passed) {
      std::fprintf(stderr, "reference check failed: %s\n", v.first_failure.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_timing_check: %s\n", e.what());
    return 1;
  }
  return 0;
}
