#include "bench/ops/cublaslt.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>

#ifndef GPUSCOPE_CUDA_LIBRARY_DIR
#define GPUSCOPE_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace gpuscope::bench::ops {
namespace {

template <class F>
bool resolve(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
  return fn != nullptr;
}

std::string status_text(const CublasLt& lt, cublasStatus_t status) {
  const char* name = lt.status_name ? lt.status_name(status) : nullptr;
  return name ? std::string(name) : "cuBLAS status " + std::to_string(static_cast<int>(status));
}

}  // namespace

#define GPUSCOPE_CUBLASLT_CALL(lt, call)                                                                               \
  do {                                                                                                                 \
    const cublasStatus_t gpuscope_status_ = (call);                                                                    \
    if (gpuscope_status_ != CUBLAS_STATUS_SUCCESS)                                                                     \
      throw std::runtime_error(std::string(#call) + " failed at " + __FILE__ + ":" + std::to_string(__LINE__) + ": " + \
                               status_text(lt, gpuscope_status_));                                                     \
  } while (0)

CublasLt::CublasLt() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("GPUSCOPE_CUBLASLT"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back("libcublasLt.so.13");
  candidates.emplace_back(std::string(GPUSCOPE_CUDA_LIBRARY_DIR) + "/libcublasLt.so.13");
  void* lib = nullptr;
  for (const std::string& c : candidates) {
    lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      m_path = c;
      break;
    }
    const char* why = dlerror();
    m_error += (m_error.empty() ? "" : "; ") + std::string(why ? why : c + ": not loadable");
  }
  if (!lib) return;
  std::string missing;
  resolve(lib, "cublasLtCreate", create, missing);
  resolve(lib, "cublasLtGetVersion", get_version, missing);
  resolve(lib, "cublasLtGetStatusName", status_name, missing);
  resolve(lib, "cublasLtMatmulDescCreate", matmul_desc_create, missing);
  resolve(lib, "cublasLtMatmulDescDestroy", matmul_desc_destroy, missing);
  resolve(lib, "cublasLtMatmulDescSetAttribute", matmul_desc_set_attribute, missing);
  resolve(lib, "cublasLtMatrixLayoutCreate", matrix_layout_create, missing);
  resolve(lib, "cublasLtMatrixLayoutDestroy", matrix_layout_destroy, missing);
  resolve(lib, "cublasLtMatmulPreferenceCreate", preference_create, missing);
  resolve(lib, "cublasLtMatmulPreferenceDestroy", preference_destroy, missing);
  resolve(lib, "cublasLtMatmulPreferenceSetAttribute", preference_set_attribute, missing);
  resolve(lib, "cublasLtMatmulAlgoGetHeuristic", algo_get_heuristic, missing);
  resolve(lib, "cublasLtMatmul", matmul, missing);
  if (!missing.empty()) {
    m_error = m_path + " lacks " + missing;
    return;  // the library stays loaded; nothing of it is used
  }
  m_version = get_version();
  m_error.clear();
  m_available = true;
}

const CublasLt& CublasLt::instance() {
  static const CublasLt lt;
  return lt;
}

cublasLtHandle_t CublasLt::handle() const {
  static std::once_flag once;
  static cublasLtHandle_t shared = nullptr;
  static cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  if (!m_available) throw std::runtime_error("cuBLASLt is not available: " + m_error);
  std::call_once(once, [&] { status = create(&shared); });
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasLtCreate failed: " + status_text(*this, status));
  return shared;
}

const CublasLt& require_cublaslt() {
  const CublasLt& lt = CublasLt::instance();
  if (!lt.available())
    throw std::runtime_error(
        "the matrix-product operators need cuBLASLt (libcublasLt.so.13, CUDA 13), which could not "
        "be loaded: " +
        lt.error() +
        ". Install the CUDA 13 toolkit's cuBLAS, add its folder to LD_LIBRARY_PATH, or set "
        "GPUSCOPE_CUBLASLT=/path/to/libcublasLt.so.13");
  return lt;
}

LtMatmul::LtMatmul(const MatmulTypes& types, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::size_t workspace_bytes, bool transa, bool transb)
    : m_lt(require_cublaslt()), m_workspace_bytes(workspace_bytes) {
  const CublasLt& lt = m_lt;
  cublasLtHandle_t handle = lt.handle();
  try {
    GPUSCOPE_CUBLASLT_CALL(lt, lt.matmul_desc_create(&m_desc, types.compute, types.scale));
    const cublasOperation_t op_a = transa ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    GPUSCOPE_CUBLASLT_CALL(lt, lt.matmul_desc_set_attribute(m_desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
    GPUSCOPE_CUBLASLT_CALL(lt, lt.matmul_desc_set_attribute(m_desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    GPUSCOPE_CUBLASLT_CALL(
        lt, lt.matrix_layout_create(&m_a, types.a, transa ? u(k) : u(m), transa ? u(m) : u(k), transa ? k : m));
    GPUSCOPE_CUBLASLT_CALL(
        lt, lt.matrix_layout_create(&m_b, types.b, transb ? u(n) : u(k), transb ? u(k) : u(n), transb ? n : k));
    GPUSCOPE_CUBLASLT_CALL(lt, lt.matrix_layout_create(&m_c, types.c, u(m), u(n), m));

    cublasLtMatmulPreference_t pref = nullptr;
    GPUSCOPE_CUBLASLT_CALL(lt, lt.preference_create(&pref));
    constexpr int kWanted = 8;
    cublasLtMatmulHeuristicResult_t results[kWanted] = {};
    int found = 0;
    const cublasStatus_t st_attr = lt.preference_set_attribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                               &workspace_bytes, sizeof workspace_bytes);
    const cublasStatus_t st_heur =
        st_attr == CUBLAS_STATUS_SUCCESS
            ? lt.algo_get_heuristic(handle, m_desc, m_a, m_b, m_c, m_c, pref, kWanted, results, &found)
            : st_attr;
    lt.preference_destroy(pref);
    GPUSCOPE_CUBLASLT_CALL(lt, st_heur);
    if (found == 0)
      throw std::runtime_error("cuBLASLt has no algorithm for a " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                               std::to_string(k) + " product of these types");
    m_algo = results[0].algo;
    m_algorithm = "cuBLASLt " + std::to_string(lt.version()) + " heuristic 1 of " + std::to_string(found) +
                  ", workspace " + std::to_string(workspace_bytes >> 20) + " MiB";
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

LtMatmul::~LtMatmul() { release(); }

void LtMatmul::release() noexcept {
  if (m_c) m_lt.matrix_layout_destroy(m_c);
  if (m_b) m_lt.matrix_layout_destroy(m_b);
  if (m_a) m_lt.matrix_layout_destroy(m_a);
  if (m_desc) m_lt.matmul_desc_destroy(m_desc);
  m_a = m_b = m_c = nullptr;
  m_desc = nullptr;
}

void LtMatmul::run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  GPUSCOPE_CUBLASLT_CALL(m_lt, m_lt.matmul(m_lt.handle(), m_desc, &alpha, a, m_a, b, m_b, &beta, c, m_c, c, m_c,
                                           &m_algo, workspace, m_workspace_bytes, stream));
}

}  // namespace gpuscope::bench::ops
