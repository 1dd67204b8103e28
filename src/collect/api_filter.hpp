// The polling API calls muted by default (GPUSCOPE_POLLING_CALLS=0). Frameworks
// call them thousands of times per step (PyTorch: cudaGetDevice around every op,
// cudaStreamQuery/cudaEventQuery in allocators); recording them costs the target
// time and floods the trace without telling the user anything. The collector
// mutes them with cuptiActivityEnableRuntimeApi/EnableDriverApi(cbid, 0), which
// must be re-applied after each cuptiActivityEnable(RUNTIME/DRIVER).
#pragma once

#include <cupti.h>

#include <span>
#include <string_view>

#include "collect/collector_config.hpp"

namespace gpuscope::collect {

[[nodiscard]] std::span<const CUpti_CallbackId> noisy_runtime_cbids();
[[nodiscard]] std::span<const CUpti_CallbackId> noisy_driver_cbids();

/// True when the API call named `name` (cuptiGetCallbackName: "cudaLaunchKernel_v7000",
/// "cuMemcpyHtoDAsync_v2", ...) puts work on the GPU, moves or allocates memory, or waits
/// for the GPU: kernel and graph launches, memcpy, memset, synchronize calls, event record
/// and stream waits, malloc/free (plain, async, managed, host), cooperative launches.
/// These are the calls GPUSCOPE_API_CALLS=gpu keeps; by name so that new variants
/// (_ptsz, _v2, Ex) are included.
[[nodiscard]] bool is_gpu_work_api(std::string_view name);

/// The GPU-work calls (is_gpu_work_api) at which GPUSCOPE_PYTHON_CALLSITES=sync takes the
/// caller's Python stack: those that wait for the GPU or move, set or allocate memory
/// (synchronize calls, memcpy, memset, malloc/free, host allocation and registration), not
/// launches, event records or stream waits (=all takes every GPU-work call).
[[nodiscard]] bool is_python_callsite_api(std::string_view name);

/// The calls at which GPUSCOPE_PYTHON_CALLSITES=`mode` takes a Python stack: is_gpu_work_api for
/// kAll, is_python_callsite_api for kSync, none (nullptr) for kNone, whether or not Python
/// sampling is on (samples alone take no call-site stacks).
using ApiNameFilter = bool (*)(std::string_view);
[[nodiscard]] ApiNameFilter python_callsite_filter(PythonCallsites mode);

/// True when `cbid` of `domain` (RUNTIME_API or DRIVER_API) is a muted polling call.
[[nodiscard]] bool is_noisy_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

}  // namespace gpuscope::collect
