#include "peak/cublaslt.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace gpuscope::peak {
namespace {

std::vector<std::string> candidates() {
  std::vector<std::string> out{"libcublasLt.so.13"};
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0')
    out.push_back(std::string(home) + "/lib64/libcublasLt.so.13");
  out.emplace_back("/usr/local/cuda/lib64/libcublasLt.so.13");
  return out;
}

template <class F>
bool bind(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

}  // namespace

const CublasLt& CublasLt::instance() {
  static const CublasLt lt;
  return lt;
}

CublasLt::CublasLt() {
  void* lib = nullptr;
  for (const std::string& path : candidates()) {
    lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      m_path = path;
      break;
    }
    const char* e = ::dlerror();
    m_error += (m_error.empty() ? "" : "; ") + std::string(e != nullptr ? e : path.c_str());
  }
  if (lib == nullptr) return;
  m_error.clear();
  std::string missing;
  bind(lib, "cublasLtCreate", create, missing);
  bind(lib, "cublasLtDestroy", destroy, missing);
  bind(lib, "cublasLtGetVersion", get_version, missing);
  bind(lib, "cublasLtGetStatusName", get_status_name, missing);
  bind(lib, "cublasLtMatmul", matmul, missing);
  bind(lib, "cublasLtMatmulDescCreate", matmul_desc_create, missing);
  bind(lib, "cublasLtMatmulDescDestroy", matmul_desc_destroy, missing);
  bind(lib, "cublasLtMatmulDescSetAttribute", matmul_desc_set_attribute, missing);
  bind(lib, "cublasLtMatrixLayoutCreate", matrix_layout_create, missing);
  bind(lib, "cublasLtMatrixLayoutDestroy", matrix_layout_destroy, missing);
  bind(lib, "cublasLtMatmulPreferenceCreate", preference_create, missing);
  bind(lib, "cublasLtMatmulPreferenceDestroy", preference_destroy, missing);
  bind(lib, "cublasLtMatmulPreferenceSetAttribute", preference_set_attribute, missing);
  bind(lib, "cublasLtMatmulAlgoGetHeuristic", algo_get_heuristic, missing);
  if (!missing.empty()) {
    m_error = m_path + " lacks " + missing + " (an older cuBLASLt than CUDA 13?)";
    return;
  }
  m_available = true;
}

void CublasLt::check(cublasStatus_t status, std::string_view call, std::string_view file, int line) const {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const char* name = get_status_name != nullptr ? get_status_name(status) : nullptr;
  throw std::runtime_error(std::string(call) + " failed at " + std::string(file) + ":" + std::to_string(line) + ": " +
                           (name != nullptr ? name : "cuBLAS status") + " (" +
                           std::to_string(static_cast<int>(status)) + ")");
}

}  // namespace gpuscope::peak
