// TensorBench: dense tensor-core GEMM rates through cuBLASLt (loaded by bench/ops/cublaslt.hpp).
//
// C (m × n) = A^T B, column-major as cuBLAS counts: A stored k × m, B k × n, C m × n, the
// "TN" layout (the one cuBLASLt requires for FP8 and INT8). Square shapes; for each shape
// the first few algorithms of cuBLASLt's heuristic are timed and the fastest
// (shape, algorithm) is the ceiling. Inputs are random (launch_fill_random). Checks: a
// few elements of C against the host's double-precision dot products of the same inputs.
// (bench::ops::LtMatmul plans one algorithm with float alpha; here several algorithms are
// tried and INT8 needs an INT32 alpha, hence the Plan below.)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "peak/benchmarks.hpp"
#include "bench/ops/cublaslt.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // cuBLAS's recommendation for Hopper
constexpr int kAlgorithms = 3;                                  // heuristic results tried per shape
constexpr std::array<int, 3> kFullShapes{4096, 8192, 16384};
constexpr std::array<int, 1> kQuickShapes{8192};
constexpr int kCheckedElements = 4;

struct GemmType {
  std::string_view ceiling;
  ElementType fill;
  cudaDataType_t ab, c;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  std::size_t ab_bytes, c_bytes;
  std::string_view label;
};

constexpr std::array kTypes{
    GemmType{"tensor_fp16", ElementType::kF16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2,
             "FP16 x FP16 -> FP16, FP32 accumulate"},
    GemmType{"tensor_bf16", ElementType::kBf16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2,
             "BF16 x BF16 -> BF16, FP32 accumulate"},
    GemmType{"tensor_tf32", ElementType::kF32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 4, 4,
             "FP32 x FP32 -> FP32 computed in TF32"},
    GemmType{"tensor_fp8", ElementType::kFp8E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1, 2,
             "E4M3 x E4M3 -> BF16, FP32 fast accumulate"},
    GemmType{"tensor_int8", ElementType::kI8, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 1, 4,
             "INT8 x INT8 -> INT32"},
};

using bench::ops::CublasLt;

void check(const CublasLt& lt, cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const char* name = lt.status_name != nullptr ? lt.status_name(status) : nullptr;
  throw std::runtime_error(std::string(call) + " failed: " + (name != nullptr ? name : "cuBLAS status") + " (" +
                           std::to_string(static_cast<int>(status)) + ")");
}

const GemmType& gemm_type(std::string_view ceiling) {
  for (const GemmType& t : kTypes)
    if (t.ceiling == ceiling) return t;
  throw std::invalid_argument("TensorBench: no GEMM type for ceiling " + std::string(ceiling));
}

// One element of type t at p, as a double (host conversions of cuda_fp16/bf16/fp8.h).
double decode(cudaDataType_t t, const unsigned char* p) {
  switch (t) {
    case CUDA_R_16F: {
      __half v;
      std::memcpy(&v, p, 2);
      return __half2float(v);
    }
    case CUDA_R_16BF: {
      __nv_bfloat16 v;
      std::memcpy(&v, p, 2);
      return __bfloat162float(v);
    }
    case CUDA_R_32F: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CUDA_R_8F_E4M3: {
      __nv_fp8_e4m3 v;
      std::memcpy(&v, p, 1);
      return static_cast<float>(v);
    }
    case CUDA_R_8I:
      return static_cast<std::int8_t>(*p);
    case CUDA_R_32I: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default:
      throw std::invalid_argument("TensorBench: cannot decode cudaDataType " + std::to_string(t));
  }
}

}  // namespace

struct TensorBench::State {
  const CublasLt& lt = CublasLt::instance();
  cublasLtHandle_t handle = nullptr;  // the process's shared handle (CublasLt::handle)
  Stream stream;
  DeviceBuffer workspace{kWorkspaceBytes};
};

namespace {

// The cuBLASLt objects of one (type, n): descriptors, layouts and heuristic algorithms.
class Plan {
 public:
  Plan(const CublasLt& lt, cublasLtHandle_t handle, const GemmType& t, int n) : m_lt(lt) {
    try {
      create(handle, t, n);
    } catch (...) {
      release();  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~Plan() { release(); }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  [[nodiscard]] const std::vector<cublasLtMatmulAlgo_t>& algos() const { return m_algos; }

  void run(cublasLtHandle_t handle, const cublasLtMatmulAlgo_t& algo, const GemmType& t, const void* a, const void* b,
           void* c, void* workspace, cudaStream_t stream) const {
    const float alpha_f = 1.0f, beta_f = 0.0f;
    const std::int32_t alpha_i = 1, beta_i = 0;
    const bool integer = t.scale == CUDA_R_32I;
    const void* alpha = integer ? static_cast<const void*>(&alpha_i) : &alpha_f;
    const void* beta = integer ? static_cast<const void*>(&beta_i) : &beta_f;
    check(m_lt,
          m_lt.matmul(handle, m_desc, alpha, a, m_a, b, m_b, beta, c, m_c, c, m_c, &algo, workspace, kWorkspaceBytes,
                      stream),
          "matmul");
  }

 private:
  void create(cublasLtHandle_t handle, const GemmType& t, int n) {
    const CublasLt& lt = m_lt;
    const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
    const std::int8_t fast_accumulate = 1;
    const std::uint64_t workspace = kWorkspaceBytes;
    check(lt, lt.matmul_desc_create(&m_desc, t.compute, t.scale), "matmul_desc_create");
    check(lt, lt.matmul_desc_set_attribute(m_desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans), "TRANSA");
    check(lt, lt.matmul_desc_set_attribute(m_desc, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof no_trans), "TRANSB");
    if (t.ab == CUDA_R_8F_E4M3)  // FP8: no periodic FP32 promotion (what training stacks use)
      check(lt,
            lt.matmul_desc_set_attribute(m_desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accumulate,
                                         sizeof fast_accumulate),
            "FAST_ACCUM");
    check(lt, lt.matrix_layout_create(&m_a, t.ab, n, n, n), "matrix_layout_create");  // k × m, ld k
    check(lt, lt.matrix_layout_create(&m_b, t.ab, n, n, n), "matrix_layout_create");  // k × n, ld k
    check(lt, lt.matrix_layout_create(&m_c, t.c, n, n, n), "matrix_layout_create");   // m × n, ld m
    check(lt, lt.preference_create(&m_pref), "preference_create");
    check(lt,
          lt.preference_set_attribute(m_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace),
          "MAX_WORKSPACE_BYTES");
    std::array<cublasLtMatmulHeuristicResult_t, kAlgorithms> results{};
    int returned = 0;
    check(lt, lt.algo_get_heuristic(handle, m_desc, m_a, m_b, m_c, m_c, m_pref, kAlgorithms, results.data(), &returned),
          "cublasLtMatmulAlgoGetHeuristic");
    for (int i = 0; i < returned; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS) m_algos.push_back(results[i].algo);
  }
  void release() noexcept {
    if (m_pref != nullptr) (void)m_lt.preference_destroy(m_pref);
    for (cublasLtMatrixLayout_t l : {m_a, m_b, m_c})
      if (l != nullptr) (void)m_lt.matrix_layout_destroy(l);
    if (m_desc != nullptr) (void)m_lt.matmul_desc_destroy(m_desc);
    m_pref = nullptr;
    m_a = m_b = m_c = nullptr;
    m_desc = nullptr;
  }
  const CublasLt& m_lt;
  cublasLtMatmulDesc_t m_desc = nullptr;
  cublasLtMatrixLayout_t m_a = nullptr, m_b = nullptr, m_c = nullptr;
  cublasLtMatmulPreference_t m_pref = nullptr;
  std::vector<cublasLtMatmulAlgo_t> m_algos;
};

// C[i, j] (column-major, ld n) against Σ_l A[l, i] B[l, j] in double, for a few (i, j)
// spread over the matrix. Exact for INT8; otherwise within 1e-3 × Σ|a b| + 1 % of |ref|
// (input rounding to TF32 and output rounding to BF16 stay far inside that; a wrong
// element of random data is off by about sqrt(n) / 3). Returns "" or what is wrong.
std::string check_gemm(const GemmType& t, int n, const DeviceBuffer& a, const DeviceBuffer& b, const DeviceBuffer& c) {
  std::vector<unsigned char> row(static_cast<std::size_t>(n) * t.ab_bytes), col(row.size());
  std::array<unsigned char, 4> out{};
  for (int e = 0; e < kCheckedElements; ++e) {
    const std::size_t i = (static_cast<std::size_t>(e) * 7919 + 13) % n,
                      j = (static_cast<std::size_t>(e) * 104729 + 5) % n;
    GPUSCOPE_CUDA_CALL(
        cudaMemcpy(row.data(), a.as<unsigned char>() + i * n * t.ab_bytes, row.size(), cudaMemcpyDeviceToHost));
    GPUSCOPE_CUDA_CALL(
        cudaMemcpy(col.data(), b.as<unsigned char>() + j * n * t.ab_bytes, col.size(), cudaMemcpyDeviceToHost));
    GPUSCOPE_CUDA_CALL(
        cudaMemcpy(out.data(), c.as<unsigned char>() + (i + j * n) * t.c_bytes, t.c_bytes, cudaMemcpyDeviceToHost));
    double ref = 0, magnitude = 0;
    for (int l = 0; l < n; ++l) {
      const double p = decode(t.ab, row.data() + l * t.ab_bytes) * decode(t.ab, col.data() + l * t.ab_bytes);
      ref += p;
      magnitude += std::abs(p);
    }
    const double got = decode(t.c, out.data());
    const double tolerance = t.c == CUDA_R_32I ? 0.0 : 1e-3 * magnitude + 1e-2 * std::abs(ref);
    if (!(std::abs(got - ref) <= tolerance))
      return "C[" + std::to_string(i) + "," + std::to_string(j) + "] = " + std::to_string(got) + ", host " +
             std::to_string(ref);
  }
  return "";
}

}  // namespace

TensorBench::TensorBench(const Context& ctx) : m_ctx(ctx) {
  const CublasLt& lt = CublasLt::instance();
  if (!lt.available()) throw NotMeasured("cuBLASLt could not be loaded: " + lt.error());
  m_state = std::make_unique<State>();
  m_state->handle = lt.handle();
}

TensorBench::~TensorBench() = default;

Ceiling TensorBench::measure(std::string_view ceiling) {
  const GemmType& t = gemm_type(ceiling);
  State& s = *m_state;
  const std::span<const int> shapes =
      m_ctx.quick ? std::span<const int>(kQuickShapes) : std::span<const int>(kFullShapes);
  const double share = (m_ctx.quick ? 1.0 : 2.0) / static_cast<double>(shapes.size() * kAlgorithms);

  Ceiling best;
  best.measured = kUnknown;
  std::string failures, tried;
  for (int n : shapes) {
    const std::size_t elements = static_cast<std::size_t>(n) * n;
    const std::size_t needed = elements * (2 * t.ab_bytes + t.c_bytes) + kWorkspaceBytes;
    if (needed > static_cast<std::size_t>(m_ctx.facts.global_memory_bytes) / 2) continue;
    DeviceBuffer a(elements * t.ab_bytes), b(elements * t.ab_bytes), c(elements * t.c_bytes);
    launch_fill_random(t.fill, a.get(), elements, 0xA11CEu + n, s.stream.get());
    launch_fill_random(t.fill, b.get(), elements, 0xB0B5u + n, s.stream.get());
    GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(s.stream.get()));
    const std::string shape = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
    std::unique_ptr<Plan> planned;
    try {
      planned = std::make_unique<Plan>(s.lt, s.handle, t, n);
    } catch (const std::runtime_error& e) {  // e.g. CUBLAS_STATUS_NOT_SUPPORTED for this type
      failures += (failures.empty() ? "" : "; ") + shape + ": " + e.what();
      continue;
    }
    const Plan& plan = *planned;
    if (plan.algos().empty()) {
      failures += (failures.empty() ? "" : "; ") + shape + ": no cuBLASLt algorithm";
      continue;
    }
    for (std::size_t k = 0; k < plan.algos().size(); ++k) {
      const cublasLtMatmulAlgo_t& algo = plan.algos()[k];
      const bench::TimingResult r = bench::time_gpu(
          [&](cudaStream_t st) { plan.run(s.handle, algo, t, a.get(), b.get(), c.get(), s.workspace.get(), st); },
          m_ctx.timing(bench::Mode::kHot, 0, share));
      const double flop = 2.0 * n * n * static_cast<double>(n);
      Ceiling candidate =
          ceiling_from_timing(ceiling, flop, r,
                              "cuBLASLt " + std::to_string(s.lt.version()) + " matmul, " + std::string(t.label) +
                                  ", TN layout, random inputs, heuristic algorithm " + std::to_string(k + 1) + " of " +
                                  std::to_string(plan.algos().size()) + ", workspace " + format_bytes(kWorkspaceBytes));
      const std::string wrong = check_gemm(t, n, a, b, c);
      mark_verified(candidate, wrong.empty(), shape + ": " + wrong);
      tried += (tried.empty() ? "" : ", ") + shape + "#" + std::to_string(k + 1);
      // The fastest verified candidate wins; an unverified one is kept only while nothing
      // verified exists (so the failure shows).
      const bool better = !std::isfinite(best.measured) || (candidate.verified && !best.verified) ||
                          (candidate.verified == best.verified && candidate.measured > best.measured);
      if (better) {
        best = std::move(candidate);
        best.best_shape = shape;
      }
    }
  }
  if (!std::isfinite(best.measured))
    throw NotMeasured("no GEMM shape could run" + (failures.empty() ? std::string() : ": " + failures));
  best.method += "; tried " + tried;
  return best;
}

}  // namespace gpuscope::peak::detail
