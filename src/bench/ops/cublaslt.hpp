// cublaslt: cuBLASLt loaded on demand with dlopen, and a matrix-product plan over it.
//
// gpuscope does not link cuBLAS: the binary must start (and every subcommand but the
// matrix products must work) on a machine without libcublasLt. The first use loads, in
// order: $GPUSCOPE_CUBLASLT (a path), "libcublasLt.so.13" (the loader's search path),
// then the CUDA toolkit's library folder gpuscope was built against. The prototypes come
// from the toolkit's <cublasLt.h> (types only; nothing is linked).
//
// LtMatmul: C (m × n) = op(A) · op(B), column-major as cuBLAS counts, alpha = 1, beta = 0,
// f32 scale; the algorithm is cuBLASLt's first heuristic result for the shape, types and
// workspace (what PyTorch's cuBLASLt path uses). run() is capturable into a CUDA graph.
// Reusable by `gpuscope peak` for its tensor-core ceilings (any cudaDataType_t /
// cublasComputeType_t pair cuBLASLt supports).
//
// Errors: a missing library → std::runtime_error saying what was tried and how to point
// gpuscope at it; a failed cuBLASLt call → std::runtime_error naming the call, file, line
// and status ("CUBLAS_STATUS_NOT_SUPPORTED").
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpuscope::bench::ops {

class CublasLt {
 public:
  /// The process-wide loader; loads on first use, never throws.
  static const CublasLt& instance();

  [[nodiscard]] bool available() const { return m_available; }
  /// Why it is not available (each path tried and dlerror), or "".
  [[nodiscard]] const std::string& error() const { return m_error; }
  /// The file that was loaded, and cublasLtGetVersion() (e.g. 130001).
  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] std::size_t version() const { return m_version; }

  /// A handle shared by the process (created on first call, never destroyed: destroying it
  /// at exit could run after the driver has been unloaded). Throws when not available.
  [[nodiscard]] cublasLtHandle_t handle() const;

  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtGetVersion) get_version = nullptr;
  decltype(&::cublasLtGetStatusName) status_name = nullptr;
  decltype(&::cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) matrix_layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) matrix_layout_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) preference_set_attribute = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;

  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;

 private:
  CublasLt();
  bool m_available = false;
  std::string m_error, m_path;
  std::size_t m_version = 0;
};

/// CublasLt::instance(), or std::runtime_error with its error() and what to do.
[[nodiscard]] const CublasLt& require_cublaslt();

struct MatmulTypes {
  cudaDataType_t a = CUDA_R_32F, b = CUDA_R_32F, c = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;  // alpha and beta are floats
};

class LtMatmul {
 public:
  /// Plans C = op(A) op(B) for column-major A (m × k, or k × m with transa), B (k × n, or
  /// n × k with transb), C (m × n). Throws when cuBLASLt is missing or has no algorithm.
  LtMatmul(const MatmulTypes& types, std::int64_t m, std::int64_t n, std::int64_t k, std::size_t workspace_bytes,
           bool transa = false, bool transb = false);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  /// Enqueues the product; `workspace` holds at least workspace_bytes. Never synchronizes.
  void run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) const;
  /// "cuBLASLt 130001 heuristic 1 of 8, workspace 32 MiB".
  [[nodiscard]] const std::string& algorithm() const { return m_algorithm; }

 private:
  void release() noexcept;
  const CublasLt& m_lt;
  cublasLtMatmulDesc_t m_desc = nullptr;
  cublasLtMatrixLayout_t m_a = nullptr, m_b = nullptr, m_c = nullptr;
  cublasLtMatmulAlgo_t m_algo{};
  std::size_t m_workspace_bytes = 0;
  std::string m_algorithm;
};

}  // namespace gpuscope::bench::ops
