#include "collect/kernel_launch_params.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace gpuscope::collect::detail {
namespace {

// The launch calls profiled: the one list for enable_callbacks() and for telling the callbacks
// apart. Graph launches, memsets and memcpys are found by name (enable_callbacks).
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
};
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

std::int32_t i32(unsigned long long v) { return static_cast<std::int32_t>(v > 0x7fffffffULL ? 0x7fffffff : v); }

void set_dims(ProfiledLaunch& l, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
              unsigned long long smem) {
  l.grid[0] = i32(gx), l.grid[1] = i32(gy), l.grid[2] = i32(gz);
  l.block[0] = i32(bx), l.block[1] = i32(by), l.block[2] = i32(bz);
  l.dynamic_shared_memory = i32(smem);
}

}  // namespace

std::span<const CUpti_CallbackId> runtime_launch_cbids() noexcept { return kRuntimeLaunches; }
std::span<const CUpti_CallbackId> driver_launch_cbids() noexcept { return kDriverLaunches; }

bool is_kernel_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const auto& ids = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? std::span<const CUpti_CallbackId>(kRuntimeLaunches)
                                                          : std::span<const CUpti_CallbackId>(kDriverLaunches);
  return std::find(ids.begin(), ids.end(), cbid) != ids.end();
}

// The API call of an exit callback returned success (0 in both the runtime's and the driver's
// codes); a launch that failed ran no kernel.
bool call_succeeded(const CUpti_CallbackData* data) {
  return data->functionReturnValue == nullptr || *static_cast<const int*>(data->functionReturnValue) == 0;
}

// A runtime launch names its kernel by the host stub; the target's own CUDA runtime knows its
// registers and shared memory (cudaFuncGetAttributes), asked at the launch's exit, once the
// module is loaded. Found only when the runtime is a shared library (PyTorch, CuPy); with a
// static cudart the facts stay unknown. The lookup must not change the program's view of
// errors: a failed call sets the runtime's last error, which the program would read after its
// launch (PyTorch does, and reports "invalid device function"). So it runs only when no error
// is pending (cudaPeekAtLastError) and clears its own (cudaGetLastError).
void read_runtime_attributes(const void* stub, ProfiledLaunch& l, bool verbose) {
  using Get = int (*)(cudaFuncAttributes*, const void*);
  using LastError = int (*)();
  static const Get get = reinterpret_cast<Get>(::dlsym(RTLD_DEFAULT, "cudaFuncGetAttributes"));
  static const LastError peek = reinterpret_cast<LastError>(::dlsym(RTLD_DEFAULT, "cudaPeekAtLastError"));
  static const LastError clear = reinterpret_cast<LastError>(::dlsym(RTLD_DEFAULT, "cudaGetLastError"));
  static std::atomic<bool> told{false};
  if (get == nullptr || peek == nullptr || clear == nullptr || stub == nullptr || peek() != 0) return;
  cudaFuncAttributes a{};
  if (const int rc = get(&a, stub); rc != 0) {
    clear();
    if (verbose && !told.exchange(true)) {
      std::fprintf(stderr,
                   "gpuscope: cudaFuncGetAttributes of a launched kernel failed (error %d): registers unknown\n", rc);
    }
    return;
  }
  l.registers_per_thread = a.numRegs;
  l.static_shared_memory = static_cast<std::int32_t>(std::min<std::size_t>(a.sharedSizeBytes, 0x7fffffff));
  l.local_memory_per_thread = static_cast<std::int32_t>(std::min<std::size_t>(a.localSizeBytes, 0x7fffffff));
}

// Grid, block and dynamic shared memory from the launch call's parameters; returns the
// CUfunction of a driver launch, and sets *stub to the host stub of a runtime launch.
CUfunction read_params(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, ProfiledLaunch& l,
                       const void** stub) {
  if (params == nullptr) return nullptr;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000: {
        // The four share one layout (func, gridDim, blockDim, args, sharedMem, stream).
        const auto* p = static_cast<const cudaLaunchKernel_v7000_params*>(params);
        set_dims(l, p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y, p->blockDim.z,
                 p->sharedMem);
        *stub = p->func;
        return nullptr;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
        const auto* p = static_cast<const cudaLaunchKernelExC_v11060_params*>(params);
        if (p->config != nullptr) {
          const cudaLaunchConfig_t& c = *p->config;
          set_dims(l, c.gridDim.x, c.gridDim.y, c.gridDim.z, c.blockDim.x, c.blockDim.y, c.blockDim.z,
                   c.dynamicSmemBytes);
        }
        *stub = p->func;
        return nullptr;
      }
      default:
        return nullptr;
    }
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      const auto* p = static_cast<const cuLaunchKernel_params*>(params);
      set_dims(l, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ, p->sharedMemBytes);
      return p->f;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
      if (p->config != nullptr) {
        const CUlaunchConfig& c = *p->config;
        set_dims(l, c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ, c.sharedMemBytes);
      }
      return p->f;
    }
    default:
      return nullptr;
  }
}

void read_function(CUfunction f, ProfiledLaunch& l) {
  if (f == nullptr) return;
  int v = 0;
  if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS) l.registers_per_thread = v;
  if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS) l.static_shared_memory = v;
  if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) == CUDA_SUCCESS) l.local_memory_per_thread = v;
}

}  // namespace gpuscope::collect::detail
