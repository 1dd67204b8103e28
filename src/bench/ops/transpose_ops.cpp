// transpose: naive vs shared-memory tiled, unpadded and padded (operator.hpp).
#include <cuda_runtime_api.h>

#include <stdexcept>

#include "bench/ops/check.hpp"
#include "bench/ops/device_buffer.hpp"
#include "bench/ops/fill.hpp"
#include "bench/ops/kernels.hpp"
#include "bench/ops/suite.hpp"

namespace gpuscope::bench::ops::detail {
namespace {

class TransposeInstance final : public Instance {
 public:
  TransposeInstance(kernels::TransposeKind kind, DType dtype, std::int64_t rows, std::int64_t cols)
      : m_kind(kind), m_dtype(dtype), m_rows(rows), m_cols(cols) {
    const auto bytes = static_cast<std::size_t>(rows * cols) * dtype_bytes(dtype);
    m_in = DeviceBuffer(bytes);
    m_out = DeviceBuffer(bytes);
    kernels::fill(kernels::Fill::kExact, dtype, m_in.get(), rows * cols, fill::kSeedX, 1.0f, nullptr);
    m_out.poison();
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
  }

  void enqueue(cudaStream_t stream) override {
    kernels::transpose(m_kind, m_dtype, m_in.get(), m_out.get(), m_rows, m_cols, stream);
  }

  Verification verify() override {
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
    check::ErrorTracker errors("out");
    const std::int64_t n = m_rows * m_cols;
    for (const check::Range& r : check::ranges_to_check(n)) {
      const std::vector<double> got = check::download(m_out.get(), m_dtype, r.first, r.count);
      for (std::int64_t j = 0; j < r.count; ++j) {
        const std::int64_t o = r.first + j;  // out is cols × rows: o = c × rows + r
        const std::int64_t row = o % m_rows, col = o / m_rows;
        const float ref = fill::value_exact(static_cast<std::uint64_t>(row * m_cols + col), fill::kSeedX);
        errors.add(o, got[static_cast<std::size_t>(j)], ref, 0.0);
      }
    }
    return errors.result(check::ranges_note(n));
  }

 private:
  kernels::TransposeKind m_kind;
  DType m_dtype;
  std::int64_t m_rows, m_cols;
  DeviceBuffer m_in, m_out;
};

}  // namespace

Operator make_transpose() {
  Operator op;
  op.name = "transpose";
  op.summary = "out = in^T: naive vs shared-memory tiles, without and with padding (coalescing, bank conflicts)";
  op.teaches =
      "A transpose only moves data, so it could run at copy speed; whether it does depends on coalescing. naive reads "
      "rows (a warp's 32 loads are consecutive: one 128-byte request) but writes columns (32 stores 'rows' elements "
      "apart: 32 requests per warp), wasting most of each DRAM burst. tiled_unpadded stages a 32 x 32 tile in shared "
      "memory so both global reads and writes are row-wise and coalesced, but reading a tile column hits one "
      "shared-memory bank 32 times (a 32-way bank conflict). tiled pads the tile to 32 x 33 so a column spans all 32 "
      "banks: coalesced and conflict-free, close to copy bandwidth (f32; 2-byte types pack two elements per bank "
      "word). After M. Harris, 'An Efficient Matrix Transpose in CUDA C/C++', NVIDIA, 2013.";
  op.shape_help = "N: an N x N matrix; or RxC (R rows, C columns); size = elements";
  op.default_sizes = "2^8:2^14:2";
  op.default_mode = Mode::kCold;
  op.variants = {
      {"naive", "32 x 8 threads per 32 x 32 tile, coalesced reads, writes strided by the row count", 0},
      {"tiled_unpadded", "through a 32 x 32 shared tile: coalesced both ways, 32-way bank conflicts", 0},
      {"tiled", "through a 32 x 33 padded shared tile: coalesced both ways, no bank conflicts", 0},
  };
  op.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  op.reference = "CPU: out[c][r] == in[r][c] exactly (tolerance 0), every element up to 2^26, else 64 chunks of 4096";
  op.shape = [](std::span<const std::int64_t> t) {
    check_token("transpose", t, {1, 2}, "N (an N x N matrix) or RxC");
    const std::vector<std::int64_t> dims =
        t.size() == 2 ? std::vector<std::int64_t>{t[0], t[1]} : std::vector<std::int64_t>{t[0], t[0]};
    if (dims[0] > kernels::kTransposeMaxRows)
      throw std::invalid_argument("transpose: at most " + std::to_string(kernels::kTransposeMaxRows) + " rows");
    return dims;
  };
  op.sweep_x = [](const CaseSpec& c) { return d(c, 0) * d(c, 1); };
  op.params = [](const CaseSpec& c) {
    return "rows=" + std::to_string(c.dims.at(0)) + ",cols=" + std::to_string(c.dims.at(1));
  };
  op.work = [](const CaseSpec& c) {
    const double bytes = d(c, 0) * d(c, 1) * dtype_bytes(c.dtype);
    BenchWork w;
    w.bytes_read = bytes;
    w.bytes_written = bytes;
    w.flops = 0;
    w.compute_ceiling = "fp32_fma";
    return w;
  };
  op.device_bytes = [](const CaseSpec& c) { return 2 * d(c, 0) * d(c, 1) * dtype_bytes(c.dtype); };
  op.setup = [](const CaseSpec& c, const SetupContext&) {
    kernels::TransposeKind kind;
    if (c.variant == "naive")
      kind = kernels::TransposeKind::kNaive;
    else if (c.variant == "tiled_unpadded")
      kind = kernels::TransposeKind::kTiledUnpadded;
    else if (c.variant == "tiled")
      kind = kernels::TransposeKind::kTiled;
    else
      throw std::invalid_argument("transpose has no variant '" + c.variant + "'");
    return std::unique_ptr<Instance>(std::make_unique<TransposeInstance>(kind, c.dtype, c.dims.at(0), c.dims.at(1)));
  };
  return op;
}

}  // namespace gpuscope::bench::ops::detail
