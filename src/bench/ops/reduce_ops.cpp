// mean: a reduction four ways (operator.hpp).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/ops/check.hpp"
#include "bench/ops/device_buffer.hpp"
#include "bench/ops/fill.hpp"
#include "bench/ops/kernels.hpp"
#include "bench/ops/suite.hpp"

namespace gpuscope::bench::ops::detail {
namespace {

enum class MeanKind { kAtomic, kTwoPass, kWarpShuffle, kCub };

// The exact sum of the first n inputs, in units of 1/32 (fill::exact_numerator), on all
// cores: 2^30 hashes take about 3 s on one.
std::int64_t exact_numerator_sum(std::int64_t n) {
  const auto threads = static_cast<std::int64_t>(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  const std::int64_t parts = n < (1 << 20) ? 1 : threads;
  std::vector<std::int64_t> sums(static_cast<std::size_t>(parts), 0);
  auto work = [&](std::int64_t p) {
    std::int64_t s = 0;
    for (std::int64_t i = n * p / parts; i < n * (p + 1) / parts; ++i)
      s += fill::exact_numerator(static_cast<std::uint64_t>(i), fill::kSeedX);
    sums[static_cast<std::size_t>(p)] = s;
  };
  std::vector<std::thread> pool;
  for (std::int64_t p = 1; p < parts; ++p) pool.emplace_back(work, p);
  work(0);
  for (std::thread& t : pool) t.join();
  std::int64_t total = 0;
  for (std::int64_t s : sums) total += s;
  return total;
}

class MeanInstance final : public Instance {
 public:
  MeanInstance(MeanKind kind, DType dtype, std::int64_t n, int sm_count)
      : m_kind(kind), m_dtype(dtype), m_n(n), m_blocks(kernels::mean_partial_blocks(sm_count)) {
    m_x = DeviceBuffer(static_cast<std::size_t>(n) * dtype_bytes(dtype));
    m_scalars = DeviceBuffer(4 * sizeof(float));  // [0] sum, [1] mean, [2] counter (uint32)
    m_partials = DeviceBuffer(static_cast<std::size_t>(m_blocks) * sizeof(float));
    if (kind == MeanKind::kCub) {
      m_temp_bytes = std::max<std::size_t>(kernels::mean_cub_temp_bytes(dtype, n), 1);
      m_temp = DeviceBuffer(m_temp_bytes);
    }
    kernels::fill(kernels::Fill::kExact, dtype, m_x.get(), n, fill::kSeedX, 1.0f, nullptr);
    m_scalars.poison();
    GPUSCOPE_CUDA_CALL(cudaMemset(counter(), 0, sizeof(unsigned int)));  // the last-block counter starts at 0
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
  }

  void enqueue(cudaStream_t stream) override {
    switch (m_kind) {
      case MeanKind::kAtomic:
        kernels::mean_atomic(m_dtype, m_x.get(), m_n, sum(), mean(), stream);
        break;
      case MeanKind::kTwoPass:
        kernels::mean_two_pass(m_dtype, m_x.get(), m_n, m_partials.as<float>(), m_blocks, mean(), stream);
        break;
      case MeanKind::kWarpShuffle:
        kernels::mean_warp_shuffle(m_dtype, m_x.get(), m_n, m_partials.as<float>(), m_blocks, counter(), mean(),
                                   stream);
        break;
      case MeanKind::kCub:
        kernels::mean_cub(m_dtype, m_x.get(), m_n, m_temp.get(), m_temp_bytes, sum(), mean(), stream);
        break;
    }
  }

  Verification verify() override {
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
    float got = 0;
    GPUSCOPE_CUDA_CALL(cudaMemcpy(&got, mean(), sizeof got, cudaMemcpyDeviceToHost));
    // Every partial sum of these inputs is exact in f32 (fill.hpp), so every summation
    // order gives the exact sum, and the kernels' f64 division its correctly rounded mean.
    const double exact_sum = static_cast<double>(exact_numerator_sum(m_n)) / 32.0;
    const double ref = static_cast<float>(exact_sum / static_cast<double>(m_n));
    check::ErrorTracker errors("mean");
    errors.add(0, got, ref, 0x1p-22 * std::fabs(ref));
    return errors.result();
  }

 private:
  float* sum() const { return m_scalars.as<float>(); }
  float* mean() const { return m_scalars.as<float>() + 1; }
  unsigned int* counter() const { return reinterpret_cast<unsigned int*>(m_scalars.as<float>() + 2); }

  MeanKind m_kind;
  DType m_dtype;
  std::int64_t m_n;
  int m_blocks;
  std::size_t m_temp_bytes = 0;
  DeviceBuffer m_x, m_scalars, m_partials, m_temp;
};

}  // namespace

Operator make_mean() {
  Operator op;
  op.name = "mean";
  op.summary = "the mean of n elements four ways, from atomicAdd per element to CUB";
  op.teaches =
      "A reduction reads n elements and writes one number: memory-bound when written well. atomic does one atomicAdd "
      "per element on a single address: the atomics serialize at one L2 slice and run at its rate, not at DRAM's, "
      "orders of magnitude slower (sizes above 2^26 are skipped). two_pass sums a grid-stride slice per block in a "
      "shared-memory tree (a __syncthreads() per level) and adds the per-block partial sums in a second one-block "
      "kernel. warp_shuffle_vec4 reads 16-byte vectors and reduces inside each warp with register shuffles "
      "(__shfl_down_sync), without a shared-memory tree; the last block to finish adds the partials, in one launch. "
      "cub is CUB's DeviceReduce, the library reference to hold your own reduction against.";
  op.shape_help = "n: elements";
  op.default_sizes = "2^12:2^28:4";
  op.default_mode = Mode::kCold;
  op.variants = {
      {"atomic", "one atomicAdd(sum, x[i]) per element into one f32, then sum / n", std::int64_t{1} << 26},
      {"two_pass", "block shared-memory tree to per-block partials, then a one-block second pass", 0},
      {"warp_shuffle_vec4", "16-byte loads, __shfl_down_sync per warp, last block adds the partials", 0},
      {"cub", "cub::DeviceReduce::TransformReduce (to f32), then sum / n", 0},
  };
  op.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  op.reference =
      "CPU: the exact sum (integers; the inputs are odd multiples of 1/32, so every partial sum is exact in f32 and "
      "any "
      "order of summation gives the exact sum) divided by n in f64, rounded to f32; tolerance 2 ulp of the f32 mean "
      "(|err| <= 2^-22 |ref|): a single missed or doubled element fails";
  op.shape = [](std::span<const std::int64_t> t) {
    check_token("mean", t, {1}, "n (elements)");
    return std::vector<std::int64_t>{t[0]};
  };
  op.sweep_x = [](const CaseSpec& c) { return d(c, 0); };
  op.params = [](const CaseSpec& c) { return "n=" + std::to_string(c.dims.at(0)); };
  op.work = [](const CaseSpec& c) {
    BenchWork w;
    w.bytes_read = d(c, 0) * dtype_bytes(c.dtype);
    w.bytes_written = sizeof(float);
    w.flops = d(c, 0);  // one addition per element
    w.compute_ceiling = "fp32_fma";
    return w;
  };
  op.device_bytes = [](const CaseSpec& c) {
    return d(c, 0) * dtype_bytes(c.dtype) * (c.variant == "cub" ? 1.01 : 1.0);
  };
  op.setup = [](const CaseSpec& c, const SetupContext& ctx) {
    static const char* const kNames[] = {"atomic", "two_pass", "warp_shuffle_vec4", "cub"};
    for (int i = 0; i < 4; ++i)
      if (c.variant == kNames[i])
        return std::unique_ptr<Instance>(
            std::make_unique<MeanInstance>(static_cast<MeanKind>(i), c.dtype, c.dims.at(0), ctx.sm_count));
    throw std::invalid_argument("mean has no variant '" + c.variant + "'");
  };
  return op;
}

}  // namespace gpuscope::bench::ops::detail
