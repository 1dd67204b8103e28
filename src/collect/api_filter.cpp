#include "collect/api_filter.hpp"

#include <algorithm>
#include <array>

namespace gpuscope::collect {
namespace {

constexpr std::array<CUpti_CallbackId, 7> kRuntime{
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,       CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,     CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
};

// cuKernelGetName/cuFuncGetName: seen once per launch on the GPU machine (CUDA 13,
// r580), issued on the app thread while CUPTI names the kernel; pure noise.
// cuDevicePrimaryCtxGetState: PyTorch checks the primary context before every op.
constexpr std::array<CUpti_CallbackId, 14> kDriver{
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,      CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
    CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,        CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,       CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,          CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,  CUPTI_DRIVER_TRACE_CBID_cuKernelGetName,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetName,        CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
};

}  // namespace

bool is_gpu_work_api(std::string_view name) {
  // Substrings of the call names after the "cuda"/"cu" prefix.
  static constexpr std::string_view kWork[] = {
      "Launch",  // cudaLaunchKernel*, cuLaunchKernel*, cudaGraphLaunch, cuLaunchHostFunc
      "Memcpy",
      "Memset",
      "Synchronize",  // cudaDeviceSynchronize, cuStreamSynchronize, ...
      "EventRecord",
      "StreamWaitEvent",
      "StreamWaitValue",
      "StreamWriteValue",
      "Malloc",
      "MemAlloc",
      "Free",  // cudaMalloc*, cuMemAlloc*, cudaFree*, cuMemFree*
      "MemPrefetch",
      "HostAlloc",
      "MemHostAlloc",
      "HostRegister",
      "MemHostRegister",
      "StreamBeginCapture",
      "StreamEndCapture",
      "GraphInstantiate",
      "GraphUpload",
      "ProfilerStart",
      "ProfilerStop",
  };
  while (name.starts_with("_")) name.remove_prefix(1);  // __cudaLaunchKernel (CUDA 13 <<<>>>)
  if (name.starts_with("cuda")) {
    name.remove_prefix(4);
  } else if (name.starts_with("cu")) {
    name.remove_prefix(2);
  } else {
    return false;
  }
  if (name.starts_with("Get") || name.starts_with("Func") || name.starts_with("Occupancy")) return false;
  for (std::string_view w : kWork) {
    if (name.find(w) != std::string_view::npos) return true;
  }
  return false;
}

bool is_python_callsite_api(std::string_view name) {
  static constexpr std::string_view kWaitOrMemory[] = {
      "Synchronize", "Memcpy", "Memset", "Malloc", "MemAlloc", "Free", "HostAlloc", "MemHostAlloc", "HostRegister"};
  if (!is_gpu_work_api(name)) return false;
  for (std::string_view w : kWaitOrMemory) {
    if (name.find(w) != std::string_view::npos) return true;
  }
  return false;
}

ApiNameFilter python_callsite_filter(PythonCallsites mode) {
  switch (mode) {
    case PythonCallsites::kAll:
      return &is_gpu_work_api;
    case PythonCallsites::kSync:
      return &is_python_callsite_api;
    case PythonCallsites::kNone:
      break;
  }
  return nullptr;
}

std::span<const CUpti_CallbackId> noisy_runtime_cbids() { return kRuntime; }
std::span<const CUpti_CallbackId> noisy_driver_cbids() { return kDriver; }

bool is_noisy_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return std::find(kRuntime.begin(), kRuntime.end(), cbid) != kRuntime.end();
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    return std::find(kDriver.begin(), kDriver.end(), cbid) != kDriver.end();
  }
  return false;
}

}  // namespace gpuscope::collect
