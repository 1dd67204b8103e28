// gemm and linear_small: matrix products through cuBLASLt (operator.hpp, cublaslt.hpp).
#include <cuda_runtime_api.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "bench/ops/check.hpp"
#include "bench/ops/cublaslt.hpp"
#include "bench/ops/device_buffer.hpp"
#include "bench/ops/fill.hpp"
#include "bench/ops/kernels.hpp"
#include "bench/ops/suite.hpp"

namespace gpuscope::bench::ops::detail {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // PyTorch's cuBLASLt workspace on sm_90
constexpr std::int64_t kFullCheckEntries = 4096;                // check every entry of C up to this
constexpr std::int64_t kSampledEntries = 1024;                  // else this many spread over C
constexpr std::int64_t kLinearDefaultK = 1024;                  // linear_small: k1 = k2 when only batch is given

MatmulTypes types_for(DType dtype) {
  MatmulTypes t;
  switch (dtype) {
    case DType::kF32:
      break;
    case DType::kTF32:
      t.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case DType::kF16:
      t.a = t.b = t.c = CUDA_R_16F;
      break;
    case DType::kBF16:
      t.a = t.b = t.c = CUDA_R_16BF;
      break;
  }
  return t;
}

std::string compute_ceiling_for(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "fp32_fma";
    case DType::kTF32:
      return "tensor_tf32";
    case DType::kF16:
      return "tensor_fp16";
    case DType::kBF16:
      return "tensor_bf16";
  }
  return "fp32_fma";
}

// Unit roundoff of the inputs as the product sees them: tf32 rounds the f32 inputs to a
// 10-bit mantissa inside the tensor cores (2^-10 allows truncation); the other dtypes
// multiply exactly the stored values the reference uses.
double input_roundoff(DType dtype) { return dtype == DType::kTF32 ? 0x1p-10 : 0.0; }

// Column-major C (m × n) = A (m × k) · B (k × n).
class MatmulInstance final : public Instance {
 public:
  MatmulInstance(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k)
      : m_dtype(dtype), m_m(m), m_n(n), m_k(k), m_plan(types_for(dtype), m, n, k, kWorkspaceBytes) {
    const auto s = static_cast<std::size_t>(dtype_bytes(dtype));
    m_a = DeviceBuffer(static_cast<std::size_t>(m * k) * s);
    m_b = DeviceBuffer(static_cast<std::size_t>(k * n) * s);
    m_c = DeviceBuffer(static_cast<std::size_t>(m * n) * s);
    m_workspace = DeviceBuffer(kWorkspaceBytes);
    kernels::fill(kernels::Fill::kUniform, dtype, m_a.get(), m * k, fill::kSeedA, 1.0f, nullptr);
    kernels::fill(kernels::Fill::kUniform, dtype, m_b.get(), k * n, fill::kSeedB, 1.0f, nullptr);
    m_c.poison();
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
  }

  void enqueue(cudaStream_t stream) override { m_plan.run(m_a.get(), m_b.get(), m_c.get(), m_workspace.get(), stream); }

  Verification verify() override {
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
    const std::int64_t entries = m_m * m_n;
    const bool all = entries <= kFullCheckEntries;
    std::optional<std::vector<double>> whole;
    if (all) whole = check::download(m_c.get(), m_dtype, 0, entries);
    const double u_out = dtype_unit_roundoff(m_dtype), u_in = input_roundoff(m_dtype);
    const double u_acc = std::sqrt(static_cast<double>(m_k)) * 0x1p-24;
    check::ErrorTracker errors("C");
    const std::int64_t count = all ? entries : kSampledEntries;
    for (std::int64_t e = 0; e < count; ++e) {
      std::int64_t i = 0, j = 0;
      if (all) {
        i = e % m_m;
        j = e / m_m;
      } else if (e < 4) {  // the corners
        i = (e & 1) ? m_m - 1 : 0;
        j = (e & 2) ? m_n - 1 : 0;
      } else {
        i = static_cast<std::int64_t>(fill::mix(static_cast<std::uint64_t>(e), 97) % static_cast<std::uint64_t>(m_m));
        j = static_cast<std::int64_t>(fill::mix(static_cast<std::uint64_t>(e), 98) % static_cast<std::uint64_t>(m_n));
      }
      double ref = 0, sum_sq = 0;
      for (std::int64_t p = 0; p < m_k; ++p) {
        const double a = input(static_cast<std::uint64_t>(i + p * m_m), fill::kSeedA);
        const double b = input(static_cast<std::uint64_t>(p + j * m_k), fill::kSeedB);
        ref += a * b;
        sum_sq += a * a * b * b;
      }
      const double got =
          all ? (*whole)[static_cast<std::size_t>(e)] : check::download(m_c.get(), m_dtype, i + j * m_m, 1)[0];
      // Output rounding, plus 8 standard deviations of the input rounding and f32
      // accumulation errors (random-signed products: they add like a random walk).
      const double tol = 2 * u_out * std::fabs(ref) + 8 * (u_in + u_acc) * std::sqrt(sum_sq);
      errors.add("(" + std::to_string(i) + "," + std::to_string(j) + ")", got, ref, tol);
    }
    std::string note = all ? ""
                           : std::to_string(kSampledEntries) + " of " + std::to_string(entries) +
                                 " entries of C checked (the corners and pseudo-random ones)";
    note += std::string(note.empty() ? "" : "; ") + m_plan.algorithm();
    return errors.result(note);
  }

 private:
  double input(std::uint64_t index, std::uint32_t seed) const {
    return check::round_to(m_dtype, fill::value_uniform(index, seed));
  }

  DType m_dtype;
  std::int64_t m_m, m_n, m_k;
  LtMatmul m_plan;
  DeviceBuffer m_a, m_b, m_c, m_workspace;
};

constexpr std::string_view kMatmulReference =
    "CPU f64 dot products of the same inputs (uniform in [-1, 1), rounded to the dtype) for every entry of C up to "
    "4096 entries, else 1024 (the corners and pseudo-random ones); tolerance per entry 2u(out) |ref| + 8 (u_in + "
    "sqrt(k) 2^-24) sqrt(sum_p (a_ip b_pj)^2), u_in = 2^-10 for tf32 and 0 otherwise";

// What gemm and linear_small share; dims are {m, n, k} of the column-major product.
Operator matmul_operator(std::function<std::array<std::int64_t, 3>(const CaseSpec&)> mnk) {
  Operator op;
  op.variants = {
      {"cublaslt", "cublasLtMatmul, f32 accumulation, the heuristic's first algorithm, 32 MiB workspace", 0}};
  op.reference = std::string(kMatmulReference);
  op.work = [mnk](const CaseSpec& c) {
    const auto [m, n, k] = mnk(c);
    const double s = dtype_bytes(c.dtype);
    BenchWork w;
    w.bytes_read = (static_cast<double>(m) * k + static_cast<double>(k) * n) * s;
    w.bytes_written = static_cast<double>(m) * n * s;
    w.flops = 2.0 * m * n * k;
    w.compute_ceiling = compute_ceiling_for(c.dtype);
    return w;
  };
  op.device_bytes = [mnk](const CaseSpec& c) {
    const auto [m, n, k] = mnk(c);
    return (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n) *
               dtype_bytes(c.dtype) +
           static_cast<double>(kWorkspaceBytes);
  };
  op.setup = [mnk](const CaseSpec& c, const SetupContext&) {
    if (c.variant != "cublaslt") throw std::invalid_argument("no variant '" + c.variant + "' (valid: cublaslt)");
    const auto [m, n, k] = mnk(c);
    return std::unique_ptr<Instance>(std::make_unique<MatmulInstance>(c.dtype, m, n, k));
  };
  return op;
}

}  // namespace

Operator make_gemm() {
  Operator op = matmul_operator([](const CaseSpec& c) {
    return std::array<std::int64_t, 3>{c.dims.at(0), c.dims.at(1), c.dims.at(2)};
  });
  op.name = "gemm";
  op.summary = "C = A B through cuBLASLt in f32, tf32, f16 and bf16: grow M, N, K until FLOP/s stops rising";
  op.teaches =
      "A product of M x K by K x N does 2 M N K FLOP on (M K + K N + M N) elements, so its arithmetic intensity grows "
      "with the size: small products are memory- and latency-bound (too few output tiles to fill every SM, a launch "
      "costs as much as the work), large ones reach the compute ceiling. The sweep shows the size where FLOP/s "
      "stabilizes and what fraction of the measured tensor-core (or FP32) ceiling that is. f32 runs on the CUDA cores "
      "(FFMA); tf32 (the f32 inputs rounded to a 10-bit mantissa), f16 and bf16 run on the tensor cores, an order of "
      "magnitude faster. cuBLASLt as PyTorch calls it: f32 accumulation, its heuristic's first algorithm.";
  op.shape_help = "N: M = N = K; or MxNxK (column-major C (M x N) = A (M x K) B (K x N)); size = M";
  op.default_sizes = "2^8:2^14:2";
  op.default_mode = Mode::kCold;
  op.dtypes = {DType::kBF16, DType::kF16, DType::kTF32, DType::kF32};
  op.shape = [](std::span<const std::int64_t> t) {
    check_token("gemm", t, {1, 3}, "N (M = N = K) or MxNxK");
    return t.size() == 3 ? std::vector<std::int64_t>{t[0], t[1], t[2]} : std::vector<std::int64_t>{t[0], t[0], t[0]};
  };
  op.sweep_x = [](const CaseSpec& c) { return d(c, 0); };
  op.params = [](const CaseSpec& c) {
    return "m=" + std::to_string(c.dims.at(0)) + ",n=" + std::to_string(c.dims.at(1)) +
           ",k=" + std::to_string(c.dims.at(2));
  };
  return op;
}

Operator make_linear_small() {
  // dims {batch, k1, k2}: y (batch x k2) = x (batch x k1) W (k1 x k2), i.e. m = batch, k = k1, n = k2.
  Operator op = matmul_operator([](const CaseSpec& c) {
    return std::array<std::int64_t, 3>{c.dims.at(0), c.dims.at(2), c.dims.at(1)};
  });
  op.name = "linear_small";
  op.summary = "small batch x k1 x k2 half-precision products (a linear layer at inference batch sizes), graph-timed";
  op.teaches =
      "A linear layer at small batch takes a few microseconds, about what launching a kernel costs, so timing it "
      "launch by launch (cold or hot mode) measures the launch path, not the kernel. Graph mode captures a batch of "
      "calls into a CUDA graph and replays it: launch overhead disappears and the kernel's own time remains (the "
      "tutorial's method for small kernels; compare --mode hot). At small batch the product must read the whole "
      "k1 x k2 weight matrix to do 2 batch k1 k2 FLOP, so it is bound by memory (or latency) and its time barely grows "
      "with the batch until the intensity passes the ridge point.";
  op.shape_help = "B: batch B with k1 = k2 = 1024; or BxK1xK2; size = batch";
  op.default_sizes = "1:4096:4";
  op.default_mode = Mode::kGraph;
  op.dtypes = {DType::kF16, DType::kBF16};
  op.shape = [](std::span<const std::int64_t> t) {
    check_token("linear_small", t, {1, 3}, "B (batch, k1 = k2 = 1024) or BxK1xK2");
    return t.size() == 3 ? std::vector<std::int64_t>{t[0], t[1], t[2]}
                         : std::vector<std::int64_t>{t[0], kLinearDefaultK, kLinearDefaultK};
  };
  op.sweep_x = [](const CaseSpec& c) { return d(c, 0); };
  op.params = [](const CaseSpec& c) {
    return "batch=" + std::to_string(c.dims.at(0)) + ",k1=" + std::to_string(c.dims.at(1)) +
           ",k2=" + std::to_string(c.dims.at(2));
  };
  return op;
}

}  // namespace gpuscope::bench::ops::detail
