// GPU test of the timing engine (include/gpuscope/bench.hpp) on kernels whose duration
// is known by construction: a kernel that spins until %globaltimer (ns) has advanced by
// a requested amount. Exits 77 (ctest: skipped) without a GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "bench/nvml.hpp"
#include "gpuscope/bench.hpp"

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(unsigned long long ns, unsigned long long* out) {
  const unsigned long long start = global_ns();
  unsigned long long now = start;
  while (now - start < ns) now = global_ns();
  if (threadIdx.x == 0) *out = now - start;  // keeps the loop observable
}

int g_failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

void print(const char* name, const gpuscope::bench::TimingResult& r) {
  std::printf(
      "%-28s mode %-5s batch %5d  samples %6zu  median %9.3f us  min %9.3f us  rel stderr %.4f %%  stop %s  "
      "SM clock %.0f -> %.0f MHz  throttled %d\n",
      name, std::string(gpuscope::bench::mode_name(r.mode)).c_str(), r.batch, r.samples_s.size(), r.median_s * 1e6,
      r.min_s * 1e6, r.rel_stderr * 100, std::string(gpuscope::bench::stop_reason_name(r.stop)).c_str(),
      r.sm_clock_mhz_before, r.sm_clock_mhz_after, r.throttled_samples);
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("skipped: no GPU\n");
    return 77;
  }
  using namespace gpuscope::bench;
  {
    const Nvml& nvml = Nvml::instance();
    std::printf("NVML: %s%s | driver %s | SM clock %.0f MHz (max %.0f) | mem clock %.0f MHz | processes %d\n",
                nvml.available() ? "available" : "not available: ", nvml.error().c_str(), nvml.driver_version().c_str(),
                nvml.sm_clock_mhz(0), nvml.max_sm_clock_mhz(0), nvml.mem_clock_mhz(0),
                nvml.compute_process_count(0).value_or(-1));
  }
  unsigned long long* out = nullptr;
  GPUSCOPE_CUDA_CALL(cudaMalloc(&out, sizeof *out));

  auto spin_for = [out](unsigned long long ns) {
    return [out, ns](cudaStream_t s) { spin<<<1, 32, 0, s>>>(ns, out); };
  };

  // A 50 µs kernel: every mode must read 50 µs plus at most a few µs of launch/timer cost.
  for (Mode mode : {Mode::kCold, Mode::kHot, Mode::kGraph}) {
    TimingOptions o;
    o.mode = mode;
    o.budget_s = 0.5;
    const TimingResult r = time_gpu(spin_for(50'000), o);
    print("spin 50 us", r);
    check(r.median_s >= 50e-6 && r.median_s <= 56e-6,
          std::string(mode_name(mode)) + ": median of a 50 us spin within [50, 56] us");
    check(static_cast<int>(r.samples_s.size()) >= o.min_samples || r.stop == StopReason::kBudget,
          std::string(mode_name(mode)) + ": at least min_samples samples unless the budget stopped it");
    check(r.min_s <= r.median_s && r.stddev_s >= 0, std::string(mode_name(mode)) + ": min <= median, stddev >= 0");
  }

  // A 2 µs kernel in graph mode: launch overhead gone, so close to 2 µs.
  {
    TimingOptions o;
    o.mode = Mode::kGraph;
    const TimingResult r = time_gpu(spin_for(2'000), o);
    print("spin 2 us (graph)", r);
    TimingOptions h;
    h.mode = Mode::kHot;
    h.batch = 1;
    const TimingResult one = time_gpu(spin_for(2'000), h);
    print("spin 2 us (hot, batch 1)", one);
    check(r.batch > 1, "graph: auto batch > 1 for a 2 us kernel");
    check(r.median_s >= 2e-6 && r.median_s <= 3.5e-6, "graph: median of a 2 us spin within [2, 3.5] us");
    // back_to_back keeps the GPU busy across the start event: no launch gap in the sample,
    // so never slower than without it (2 % for noise), and still >= the spin itself. Same
    // batch as the plain run: the graph launch is spread over the batch, and an auto batch of
    // 8 against 15 alone made back-to-back read 3.8 % slower (H100, 2026-11-27).
    TimingOptions b = o;
    b.batch = r.batch;
    b.back_to_back = true;
    const TimingResult bb = time_gpu(spin_for(2'000), b);
    print("spin 2 us (graph, back to back)", bb);
    check(bb.median_s >= 2e-6 && bb.median_s <= r.median_s * 1.02,
          "graph back_to_back: median >= 2 us and <= the plain graph median + 2 %");
  }

  // The stopping rule: a steady kernel converges; a tiny budget stops on budget.
  {
    TimingOptions o;
    o.mode = Mode::kHot;
    o.batch = 1;
    o.budget_s = 1e-4;
    o.min_samples = 1000;
    const TimingResult r = time_gpu(spin_for(20'000), o);
    print("budget 0.1 ms", r);
    check(r.stop == StopReason::kBudget, "a 0.1 ms budget stops on budget");
  }

  // Errors: a bad launch configuration is reported as a CudaError naming the call.
  try {
    (void)time_gpu([out](cudaStream_t s) { spin<<<1, 4096, 0, s>>>(1, out); });
    check(false, "an invalid launch throws CudaError");
  } catch (const CudaError& e) {
    std::printf("    message: %s\n", e.what());
    check(std::string(e.what()).find("failed at") != std::string::npos, "an invalid launch throws CudaError");
  }
  cudaGetLastError();
  try {
    TimingOptions o;
    o.min_samples = 0;
    (void)time_gpu(spin_for(1'000), o);
    check(false, "min_samples 0 is refused");
  } catch (const std::invalid_argument& e) {
    check(true, std::string("min_samples 0 is refused: ") + e.what());
  }

  cudaFree(out);
  std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "OK", g_failures);
  return g_failures ? 1 : 0;
}
