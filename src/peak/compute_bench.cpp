// ComputeBench: CUDA-core arithmetic rates (FP64/FP32/FP16/BF16 FMA, INT32 IMAD, SFU).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "peak/benchmarks.hpp"
#include "peak/checksums.hpp"
#include "peak/device_specs.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr double kTargetCallS = 2e-3;  // one call lasts about this long at the theoretical rate
constexpr int kFallbackIterations = 512;

}  // namespace

ComputeBench::ComputeBench(const Context& ctx) : m_ctx(ctx) {}

Ceiling ComputeBench::measure(CoreOp op, std::string_view ceiling) {
  const CoreKernelShape shape = core_kernel_shape(op);
  // One full wave: every SM holds as many blocks as the occupancy rules allow.
  const int grid = m_ctx.facts.sm_count * std::max(1, shape.blocks_per_sm);
  const double ops_per_iteration =
      static_cast<double>(grid) * shape.block * shape.chains * shape.unroll * shape.ops_per_instruction;
  // Iterations: about kTargetCallS at the theoretical rate at the maximum clock; even, so
  // every FMA chain returns to its start value.
  const double rate = theoretical_value(ceiling, m_ctx.facts, m_ctx.facts.max_sm_clock_mhz, kUnknown);
  int iterations = kFallbackIterations;
  if (std::isfinite(rate) && rate > 0)
    iterations = static_cast<int>(std::clamp(kTargetCallS * rate / ops_per_iteration, 2.0, 1e7));
  iterations += iterations % 2;

  const std::size_t threads = static_cast<std::size_t>(grid) * shape.block;
  DeviceBuffer out(threads * sizeof(float));
  const bench::TimingResult t = bench::time_gpu(
      [&](cudaStream_t s) { launch_core(op, iterations, out.as<float>(), grid, s); }, m_ctx.timing(bench::Mode::kHot));
  Ceiling c = ceiling_from_timing(
      ceiling, ops_per_iteration * iterations, t,
      std::to_string(shape.chains) + " independent chains x " + std::to_string(shape.unroll) +
          " unrolled steps per thread, grid " + std::to_string(grid) + " x " + std::to_string(shape.block) + " (" +
          std::to_string(shape.blocks_per_sm) + " blocks/SM), " + std::to_string(iterations) + " iterations");

  // Every thread's result (from the last timed call) against the closed form.
  std::vector<float> host(threads);
  GPUSCOPE_CUDA_CALL(cudaMemcpy(host.data(), out.get(), threads * sizeof(float), cudaMemcpyDeviceToHost));
  const double want = core_expected(op, shape.chains), tolerance = core_tolerance(op, shape.chains);
  std::size_t bad = 0;
  double first_bad = 0;
  for (float v : host) {
    if (!(std::abs(static_cast<double>(v) - want) <= tolerance)) {
      if (bad++ == 0) first_bad = v;
    }
  }
  mark_verified(c, bad == 0,
                std::to_string(bad) + " of " + std::to_string(threads) + " threads wrong, e.g. " +
                    std::to_string(first_bad) + " instead of " + std::to_string(want));
  return c;
}

}  // namespace gpuscope::peak::detail
