// cuBLASLt through dlopen, so gpuscope starts (and measures everything else) where
// libcublasLt is missing; the tensor-core ceilings then say why they were not measured.
//
// The function pointers are typed with decltype of the prototypes in cublasLt.h of the
// CUDA toolkit (only the header is used at build time; nothing links libcublasLt).
// Tried in order: "libcublasLt.so.13" (the loader's search path), then
// $CUDA_HOME/lib64/libcublasLt.so.13, /usr/local/cuda/lib64/libcublasLt.so.13.
// The library is never unloaded (cuBLASLt keeps state until process exit).
#pragma once

#include <cublasLt.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuscope::peak {

class CublasLt {
 public:
  /// The process-wide instance; loads the library on first use. Never throws.
  static const CublasLt& instance();

  /// Library loaded and every symbol below found.
  [[nodiscard]] bool available() const { return m_available; }
  /// Why not ("libcublasLt.so.13: cannot open shared object file; ..."), or "".
  [[nodiscard]] const std::string& error() const { return m_error; }
  /// The file that was loaded, "" if none.
  [[nodiscard]] const std::string& path() const { return m_path; }
  /// cublasLtGetVersion(), e.g. 130000; 0 if unavailable.
  [[nodiscard]] std::size_t version() const { return m_available ? get_version() : 0; }

  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetVersion) get_version = nullptr;
  decltype(&cublasLtGetStatusName) get_status_name = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  decltype(&cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) matrix_layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) matrix_layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic = nullptr;

  /// Throws std::runtime_error "cublasLtMatmul(...) failed at peak/tensor_bench.cpp:88:
  /// CUBLAS_STATUS_NOT_SUPPORTED (15)" unless status is CUBLAS_STATUS_SUCCESS.
  void check(cublasStatus_t status, std::string_view call, std::string_view file, int line) const;

  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;

 private:
  CublasLt();
  bool m_available = false;
  std::string m_error;
  std::string m_path;
};

}  // namespace gpuscope::peak

/// Checks a cuBLASLt call made through CublasLt `lt`; throws naming the call.
#define GPUSCOPE_CUBLASLT_CALL(lt, call) (lt).check((call), #call, __FILE__, __LINE__)
