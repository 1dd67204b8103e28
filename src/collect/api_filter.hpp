// The polling API calls muted by default (GPUSCOPE_POLLING_CALLS=0). Frameworks
// call them thousands of times per step (PyTorch: cudaGetDevice around every op,
// cudaStreamQuery/cudaEventQuery in allocators); recording them costs the target
// time and floods the trace without telling the user anything. The collector
// mutes them with cuptiActivityEnableRuntimeApi/EnableDriverApi(cbid, 0), which
// must be re-applied after each cuptiActivityEnable(RUNTIME/DRIVER).
#pragma once

#include <cupti.h>

#include <span>

namespace gpuscope::collect {

[[nodiscard]] std::span<const CUpti_CallbackId> noisy_runtime_cbids();
[[nodiscard]] std::span<const CUpti_CallbackId> noisy_driver_cbids();

/// True when `cbid` of `domain` (RUNTIME_API or DRIVER_API) is a muted polling call.
[[nodiscard]] bool is_noisy_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

}  // namespace gpuscope::collect
