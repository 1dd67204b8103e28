// softmax: row-wise, naive three-pass vs online (operator.hpp).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bench/ops/check.hpp"
#include "bench/ops/device_buffer.hpp"
#include "bench/ops/fill.hpp"
#include "bench/ops/kernels.hpp"
#include "bench/ops/suite.hpp"

namespace gpuscope::bench::ops::detail {
namespace {

constexpr std::int64_t kSoftmaxElements = std::int64_t{1} << 24;  // rows × cols when only cols is given
constexpr float kInputScale = 4.0f;                               // inputs uniform in [-4, 4)
constexpr std::int64_t kCheckedRows = 64;

class SoftmaxInstance final : public Instance {
 public:
  SoftmaxInstance(kernels::SoftmaxKind kind, DType dtype, std::int64_t rows, std::int64_t cols)
      : m_kind(kind), m_dtype(dtype), m_rows(rows), m_cols(cols) {
    const auto bytes = static_cast<std::size_t>(rows * cols) * dtype_bytes(dtype);
    m_x = DeviceBuffer(bytes);
    m_y = DeviceBuffer(bytes);
    kernels::fill(kernels::Fill::kUniform, dtype, m_x.get(), rows * cols, fill::kSeedX, kInputScale, nullptr);
    m_y.poison();
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
  }

  void enqueue(cudaStream_t stream) override {
    kernels::softmax(m_kind, m_dtype, m_x.get(), m_y.get(), m_rows, m_cols, stream);
  }

  Verification verify() override {
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
    // Output rounding (2u of the dtype) plus a worst-case bound of the f32 sum of exp over
    // the ceil(cols / threads) terms a thread adds, the block tree, expf and the division.
    const double per_thread = std::ceil(static_cast<double>(m_cols) / kernels::softmax_block_threads(m_cols));
    const double rel = 2.0 * dtype_unit_roundoff(m_dtype) + (per_thread + 64.0) * 0x1p-24;
    check::ErrorTracker errors("y");
    const std::int64_t checked_rows = std::min(m_rows, kCheckedRows);
    std::vector<double> x(static_cast<std::size_t>(m_cols)), e(x.size());
    for (std::int64_t k = 0; k < checked_rows; ++k) {
      const std::int64_t row = checked_rows == 1 ? 0 : (m_rows - 1) * k / (checked_rows - 1);
      const std::int64_t base = row * m_cols;
      const std::vector<double> got = check::download(m_y.get(), m_dtype, base, m_cols);
      double m = -INFINITY;
      for (std::int64_t c = 0; c < m_cols; ++c) {
        x[c] = check::round_to(m_dtype,
                               fill::value_uniform(static_cast<std::uint64_t>(base + c), fill::kSeedX) * kInputScale);
        m = std::max(m, x[c]);
      }
      double s = 0;
      for (std::int64_t c = 0; c < m_cols; ++c) s += (e[c] = std::exp(x[c] - m));
      for (std::int64_t c = 0; c < m_cols; ++c) {
        const double ref = e[c] / s;
        errors.add(base + c, got[static_cast<std::size_t>(c)], ref, rel * ref + dtype_subnormal_step(m_dtype));
      }
    }
    std::string note;
    if (checked_rows < m_rows)
      note = std::to_string(checked_rows) + " of " + std::to_string(m_rows) +
             " rows checked, evenly spread, first and last included";
    return errors.result(note);
  }

 private:
  kernels::SoftmaxKind m_kind;
  DType m_dtype;
  std::int64_t m_rows, m_cols;
  DeviceBuffer m_x, m_y;
};

}  // namespace

Operator make_softmax() {
  Operator op;
  op.name = "softmax";
  op.summary = "row-wise softmax: naive three passes vs online softmax (max and sum in one pass)";
  op.teaches =
      "Softmax is memory-bound: each element needs a max, an exp, a sum and a division, about 5 FLOP per 8 bytes in "
      "f32. "
      "naive reads each row three times (max, then the sum of exp(x - max), then the write pass); online computes the "
      "max and the normalizer in a single pass, rescaling the running sum by exp(old max - new max) whenever the max "
      "grows (Milakov & Gimelshein, 'Online normalizer calculation for softmax', 2018), then writes: two reads instead "
      "of three. Short rows stay in L1/L2 between passes and the two cost about the same; once a row no longer fits, "
      "the saved pass is saved DRAM traffic. One block per row: very long rows leave most SMs idle (few rows), very "
      "short ones leave threads idle.";
  op.shape_help = "C: rows of C elements, 2^24 / C rows (16M elements in all); or RxC";
  op.default_sizes = "2^6:2^18:4";
  op.default_mode = Mode::kCold;
  op.variants = {
      {"naive", "one block per row: max pass, sum-of-exp pass, write pass (reads the row 3 times)", 0},
      {"online", "one block per row: online max + normalizer pass, write pass (reads the row twice)", 0},
  };
  op.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  op.reference =
      "CPU f64 softmax of the same inputs (uniform in [-4, 4), rounded to the dtype) on 64 rows spread over the "
      "matrix (all rows if fewer); tolerance relative per element: 2u of the dtype + (ceil(cols / threads) + 64) "
      "2^-24, the output rounding plus a worst-case bound of the f32 sum, plus one subnormal step of the dtype "
      "(f16 results below 6.1e-5 are subnormal: their rounding error is absolute)";
  op.shape = [](std::span<const std::int64_t> t) {
    check_token("softmax", t, {1, 2}, "C (row length) or RxC");
    if (t.size() == 2) return std::vector<std::int64_t>{t[0], t[1]};
    return std::vector<std::int64_t>{std::max<std::int64_t>(1, kSoftmaxElements / t[0]), t[0]};
  };
  op.sweep_x = [](const CaseSpec& c) { return d(c, 1); };
  op.params = [](const CaseSpec& c) {
    return "rows=" + std::to_string(c.dims.at(0)) + ",cols=" + std::to_string(c.dims.at(1));
  };
  op.work = [](const CaseSpec& c) {
    const double n = d(c, 0) * d(c, 1);
    BenchWork w;
    w.bytes_read = n * dtype_bytes(c.dtype);
    w.bytes_written = n * dtype_bytes(c.dtype);
    w.flops = 5 * n;  // max, subtract, exp, add, divide per element
    w.compute_ceiling = "fp32_fma";
    return w;
  };
  op.device_bytes = [](const CaseSpec& c) { return 2 * d(c, 0) * d(c, 1) * dtype_bytes(c.dtype); };
  op.setup = [](const CaseSpec& c, const SetupContext&) {
    kernels::SoftmaxKind kind;
    if (c.variant == "naive")
      kind = kernels::SoftmaxKind::kNaive;
    else if (c.variant == "online")
      kind = kernels::SoftmaxKind::kOnline;
    else
      throw std::invalid_argument("softmax has no variant '" + c.variant + "'");
    return std::unique_ptr<Instance>(std::make_unique<SoftmaxInstance>(kind, c.dtype, c.dims.at(0), c.dims.at(1)));
  };
  return op;
}

}  // namespace gpuscope::bench::ops::detail
