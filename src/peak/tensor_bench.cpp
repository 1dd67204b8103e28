// TensorBench: dense tensor-core GEMM rates through cuBLASLt (loaded by bench/ops/cublaslt.hpp).
//
// C (m × n) = op(A) op(B), column-major as cuBLAS counts. The rate is the best of a
// coarse-to-fine sweep (peak/sweep.hpp) over shapes (8192³, 16384×8192×8192, 4096³; 8192³
// with --quick), layouts (NN, NT, TN; TN only for FP8 and INT8, which cuBLASLt requires)
// and the algorithms cuBLASLt's heuristic proposes for each (up to 8, 4 with --quick),
// with a 64 MiB workspace (a too small workspace takes the fastest kernels out of the
// heuristic's choice). PyTorch's torch.matmul of row-major tensors is the NN layout here.
// Inputs are random (launch_fill_random: zeros draw less power and run faster). Checks: a
// few elements of C against the host's double-precision dot products of the same inputs.
// (bench::ops::LtMatmul plans one algorithm with float alpha; here several algorithms are
// tried and INT8 needs an INT32 alpha, hence the Plan below.)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bench/ops/cublaslt.hpp"
#include "peak/benchmarks.hpp"
#include "peak/sweep.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{64} << 20;  // 2 x cuBLAS's recommendation for Hopper
constexpr int kAlgorithms = 8, kQuickAlgorithms = 4;            // heuristic results tried per shape and layout
constexpr int kCheckedElements = 4;
constexpr double kBurstRest_s = 1.0;  // idle before the burst: the SM clock climbs back
constexpr int kBurstGemms = 20;       // as peak/reference.cpp times torch.matmul
// The sweep per tensor ceiling (peak/context.hpp, SweepPlan): 2.5 s of coarse timings (1.2 s
// with --quick), up to 4 (2) finalists within 3 % of the best, each 0.5 of the run's budget.
constexpr SweepPlan kSweep{2.5, 4, 0.03, 0.5, 1e-12, "TFLOP/s"}, kQuickSweep{1.2, 2, 0.03, 0.5, 1e-12, "TFLOP/s"};

struct GemmShape {
  int m, n, k;
  [[nodiscard]] std::string text() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};
constexpr std::array kFullShapes{GemmShape{8192, 8192, 8192}, GemmShape{16384, 8192, 8192},
                                 GemmShape{4096, 4096, 4096}};
constexpr std::array kQuickShapes{GemmShape{8192, 8192, 8192}};

// op(A), op(B): N = as stored (column-major), T = transposed.
struct GemmLayout {
  bool a_transposed, b_transposed;
  std::string_view name;
};
constexpr std::array kAllLayouts{GemmLayout{false, false, "NN"}, GemmLayout{false, true, "NT"},
                                 GemmLayout{true, false, "TN"}};
constexpr std::array kTnOnly{GemmLayout{true, false, "TN"}};

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

// The cuBLASLt objects of one (type, shape, layout): descriptors, layouts and the
// heuristic's algorithms with the workspace each needs.
class Plan {
 public:
  Plan(const CublasLt& lt, cublasLtHandle_t handle, const GemmType& t, const GemmShape& shape, const GemmLayout& layout,
       int algorithms)
      : m_lt(lt) {
    try {
      create(handle, t, shape, layout, algorithms);
    } catch (...) {
      release();  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~Plan() { release(); }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  [[nodiscard]] const std::vector<cublasLtMatmulHeuristicResult_t>& algos() const { return m_algos; }

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
  void create(cublasLtHandle_t handle, const GemmType& t, const GemmShape& s, const GemmLayout& layout,
              int algorithms) {
    const CublasLt& lt = m_lt;
    const cublasOperation_t op_a = layout.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = layout.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const std::int8_t fast_accumulate = 1;
    const std::uint64_t workspace = kWorkspaceBytes;
    check(lt, lt.matmul_desc_create(&m_desc, t.compute, t.scale), "matmul_desc_create");
    check(lt, lt.matmul_desc_set_attribute(m_desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a), "TRANSA");
    check(lt, lt.matmul_desc_set_attribute(m_desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b), "TRANSB");
    if (t.ab == CUDA_R_8F_E4M3)  // FP8: no periodic FP32 promotion (what training stacks use)
      check(lt,
            lt.matmul_desc_set_attribute(m_desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accumulate,
                                         sizeof fast_accumulate),
            "FAST_ACCUM");
    // Stored shapes (rows, columns, leading dimension), column-major: A is m × k (or k × m
    // transposed), B k × n (or n × k), C m × n.
    if (layout.a_transposed)
      check(lt, lt.matrix_layout_create(&m_a, t.ab, s.k, s.m, s.k), "matrix_layout_create");
    else
      check(lt, lt.matrix_layout_create(&m_a, t.ab, s.m, s.k, s.m), "matrix_layout_create");
    if (layout.b_transposed)
      check(lt, lt.matrix_layout_create(&m_b, t.ab, s.n, s.k, s.n), "matrix_layout_create");
    else
      check(lt, lt.matrix_layout_create(&m_b, t.ab, s.k, s.n, s.k), "matrix_layout_create");
    check(lt, lt.matrix_layout_create(&m_c, t.c, s.m, s.n, s.m), "matrix_layout_create");
    check(lt, lt.preference_create(&m_pref), "preference_create");
    check(lt,
          lt.preference_set_attribute(m_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace),
          "MAX_WORKSPACE_BYTES");
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(algorithms));
    int returned = 0;
    check(lt, lt.algo_get_heuristic(handle, m_desc, m_a, m_b, m_c, m_c, m_pref, algorithms, results.data(), &returned),
          "cublasLtMatmulAlgoGetHeuristic");
    for (int i = 0; i < returned; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS) m_algos.push_back(results[i]);
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
  std::vector<cublasLtMatmulHeuristicResult_t> m_algos;
};

// `count` elements of `bytes` each, `stride` elements apart from element `first` of the
// device array `src`, into the host buffer `dst`.
void gather(unsigned char* dst, const DeviceBuffer& src, std::size_t first, std::size_t stride, std::size_t count,
            std::size_t bytes) {
  GPUSCOPE_CUDA_CALL(cudaMemcpy2D(dst, bytes, src.as<unsigned char>() + first * bytes, stride * bytes, bytes, count,
                                  cudaMemcpyDeviceToHost));
}

// C[i, j] (column-major, ld m) against Σ_l op(A)[i, l] op(B)[l, j] in double, for a few
// (i, j) spread over the matrix. Exact for INT8; otherwise within 1e-3 × Σ|a b| + 1 % of
// |ref| (input rounding to TF32 and output rounding to BF16 stay far inside that; a wrong
// element of random data is off by about sqrt(k) / 3). Returns "" or what is wrong.
std::string check_gemm(const GemmType& t, const GemmShape& s, const GemmLayout& layout, const DeviceBuffer& a,
                       const DeviceBuffer& b, const DeviceBuffer& c) {
  const std::size_t m = s.m, n = s.n, k = s.k;
  std::vector<unsigned char> row(k * t.ab_bytes), col(row.size());
  std::array<unsigned char, 4> out{};
  for (int e = 0; e < kCheckedElements; ++e) {
    const std::size_t i = (static_cast<std::size_t>(e) * 7919 + 13) % m,
                      j = (static_cast<std::size_t>(e) * 104729 + 5) % n;
    if (layout.a_transposed)  // A stored k × m: op(A)[i, l] = A[l + i k]
      gather(row.data(), a, i * k, 1, k, t.ab_bytes);
    else  // A stored m × k: op(A)[i, l] = A[i + l m]
      gather(row.data(), a, i, m, k, t.ab_bytes);
    if (layout.b_transposed)  // B stored n × k: op(B)[l, j] = B[j + l n]
      gather(col.data(), b, j, n, k, t.ab_bytes);
    else  // B stored k × n: op(B)[l, j] = B[l + j k]
      gather(col.data(), b, j * k, 1, k, t.ab_bytes);
    GPUSCOPE_CUDA_CALL(
        cudaMemcpy(out.data(), c.as<unsigned char>() + (i + j * m) * t.c_bytes, t.c_bytes, cudaMemcpyDeviceToHost));
    double ref = 0, magnitude = 0;
    for (std::size_t l = 0; l < k; ++l) {
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

// The inputs and output of one shape, filled with random values.
struct ShapeData {
  GemmShape shape;
  DeviceBuffer a, b, c;
};

// One trial's plan and algorithm.
struct GemmTrial {
  const ShapeData* data;
  const Plan* plan;
  const GemmLayout* layout;
  cublasLtMatmulAlgo_t algo;
  std::size_t rank;  // the heuristic's order for this shape and layout (0 = its first choice)
};

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
  const std::span<const GemmShape> shapes =
      m_ctx.quick ? std::span<const GemmShape>(kQuickShapes) : std::span<const GemmShape>(kFullShapes);
  const bool tn_only = t.ab == CUDA_R_8F_E4M3 || t.ab == CUDA_R_8I;
  const std::span<const GemmLayout> layouts =
      tn_only ? std::span<const GemmLayout>(kTnOnly) : std::span<const GemmLayout>(kAllLayouts);

  std::vector<std::unique_ptr<ShapeData>> data;
  std::vector<std::unique_ptr<Plan>> plans;
  std::vector<Trial> trials;
  std::vector<GemmTrial> gemms;
  std::string failures;
  auto fail = [&](const std::string& what) { failures += (failures.empty() ? "" : "; ") + what; };
  for (const GemmShape& shape : shapes) {
    const std::size_t a_elements = static_cast<std::size_t>(shape.m) * shape.k,
                      b_elements = static_cast<std::size_t>(shape.k) * shape.n,
                      c_elements = static_cast<std::size_t>(shape.m) * shape.n;
    const std::size_t needed = (a_elements + b_elements) * t.ab_bytes + c_elements * t.c_bytes;
    if (needed + kWorkspaceBytes > static_cast<std::size_t>(m_ctx.facts.global_memory_bytes) / 2) continue;
    auto d = std::make_unique<ShapeData>(ShapeData{shape, DeviceBuffer(a_elements * t.ab_bytes),
                                                   DeviceBuffer(b_elements * t.ab_bytes),
                                                   DeviceBuffer(c_elements * t.c_bytes)});
    const std::uint32_t seed = static_cast<std::uint32_t>(shape.m * 3 + shape.n * 5 + shape.k * 7);
    launch_fill_random(t.fill, d->a.get(), a_elements, 0xA11CEu + seed, s.stream.get());
    launch_fill_random(t.fill, d->b.get(), b_elements, 0xB0B5u + seed, s.stream.get());
    for (const GemmLayout& layout : layouts) {
      const std::string where = shape.text() + " " + std::string(layout.name);
      try {
        plans.push_back(
            std::make_unique<Plan>(s.lt, s.handle, t, shape, layout, m_ctx.quick ? kQuickAlgorithms : kAlgorithms));
      } catch (const std::runtime_error& e) {  // e.g. CUBLAS_STATUS_NOT_SUPPORTED for this type
        fail(where + ": " + e.what());
        continue;
      }
      const Plan& plan = *plans.back();
      if (plan.algos().empty()) fail(where + ": no cuBLASLt algorithm");
      for (std::size_t a = 0; a < plan.algos().size(); ++a) {
        trials.push_back(Trial{"cuBLASLt " + std::string(layout.name),
                               shape.text() + ", heuristic " + std::to_string(a + 1) + " of " +
                                   std::to_string(plan.algos().size()) + " (workspace " +
                                   format_bytes(static_cast<double>(plan.algos()[a].workspaceSize)) + ")",
                               kUnknown, kUnknown, false});
        gemms.push_back(GemmTrial{d.get(), &plan, &layout, plan.algos()[a].algo, a});
      }
    }
    data.push_back(std::move(d));
  }
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(s.stream.get()));
  // Most promising first (the coarse budget may not reach the end): every shape and
  // layout's first heuristic choice, then every second choice, ...
  std::vector<std::size_t> order(trials.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return gemms[x].rank < gemms[y].rank; });
  {
    std::vector<Trial> sorted_trials;
    std::vector<GemmTrial> sorted_gemms;
    for (std::size_t i : order) {
      sorted_trials.push_back(std::move(trials[i]));
      sorted_gemms.push_back(gemms[i]);
    }
    trials = std::move(sorted_trials);
    gemms = std::move(sorted_gemms);
  }
  if (trials.empty())
    throw NotMeasured("no GEMM shape could run" + (failures.empty() ? std::string() : ": " + failures));

  auto enqueue = [&](std::size_t i) {
    return [&, i](cudaStream_t st) {
      const GemmTrial& g = gemms[i];
      g.plan->run(s.handle, g.algo, t, g.data->a.get(), g.data->b.get(), g.data->c.get(), s.workspace.get(), st);
    };
  };
  auto flop = [&](std::size_t i) {
    const GemmShape& sh = gemms[i].data->shape;
    return 2.0 * sh.m * static_cast<double>(sh.n) * sh.k;
  };
  const SweepPlan& plan = m_ctx.quick ? kQuickSweep : kSweep;
  std::optional<Ceiling> best = run_sweep(
      m_ctx, trials, plan, [&](std::size_t i, cudaStream_t st) { enqueue(i)(st); }, flop,
      [&](std::size_t i, const bench::TimingResult& r) {
        const GemmTrial& g = gemms[i];
        Ceiling c =
            ceiling_from_timing(ceiling, flop(i), r,
                                "cuBLASLt " + std::to_string(s.lt.version()) + " matmul, " + std::string(t.label) +
                                    ", " + std::string(g.layout->name) + " layout, random inputs, " + trials[i].label +
                                    ", workspace limit " + format_bytes(kWorkspaceBytes));
        const std::string wrong = check_gemm(t, g.data->shape, *g.layout, g.data->a, g.data->b, g.data->c);
        mark_verified(c, wrong.empty(), g.data->shape.text() + ": " + wrong);
        c.best_shape = g.data->shape.text();
        return c;
      });
  if (!best) throw NotMeasured("no GEMM could be timed" + (failures.empty() ? std::string() : ": " + failures));
  Ceiling c = std::move(*best);
  // The winner once more as a burst (sweep.hpp, with_burst): the GPU idles kBurstRest, then
  // kBurstGemms single GEMMs are timed, as PyTorch's reference matmul is (peak/reference.cpp).
  if (const std::optional<std::size_t> winner = choose_best(trials)) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kBurstRest_s));
    try {
      bench::TimingOptions o = Context::coarse_timing(false);
      o.min_samples = o.max_samples = kBurstGemms;
      const bench::TimingResult r = bench::time_gpu(enqueue(*winner), o);
      c = with_burst(std::move(c), ceiling_from_timing(ceiling, flop(*winner), r, ""), kBurstRest_s, plan.scale,
                     plan.unit);
    } catch (const std::runtime_error& e) {
      c.method += std::string("; burst not timed: ") + e.what();
    }
  }
  if (!failures.empty()) c.method += "; not run: " + failures;
  return c;
}

}  // namespace gpuscope::peak::detail
