// kernel_launch_params (internal): what kernels mode reads from a launch call's CUPTI
// callback: which callback ids are kernel launches, whether the call succeeded, and the
// launch's grid, block, shared memory and registers (from the call's parameters, the
// driver's CUfunction, or the program's shared CUDA runtime). No state; called on the
// launching thread by KernelProfiler (kernel_profiler.hpp).
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <span>

#include "collect/profiled_launch.hpp"

namespace gpuscope::collect::detail {

/// The launch calls profiled, by domain: the one list for enable_callbacks() and for
/// telling the callbacks apart.
[[nodiscard]] std::span<const CUpti_CallbackId> runtime_launch_cbids() noexcept;
[[nodiscard]] std::span<const CUpti_CallbackId> driver_launch_cbids() noexcept;
[[nodiscard]] bool is_kernel_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

/// The API call of an exit callback returned success (0 in both the runtime's and the
/// driver's codes); a launch that failed ran no kernel.
[[nodiscard]] bool call_succeeded(const CUpti_CallbackData* data);

/// Grid, block and dynamic shared memory from the launch call's parameters into `l`;
/// returns the CUfunction of a driver launch, and sets *stub to the host stub of a runtime
/// launch.
CUfunction read_params(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, ProfiledLaunch& l,
                       const void** stub);
/// Registers, static shared and local memory of a driver launch's function (nullptr: none).
void read_function(CUfunction f, ProfiledLaunch& l);
/// The same facts for a runtime launch, from the program's own shared CUDA runtime
/// (cudaFuncGetAttributes on the host stub), at the launch's exit; leaves the program's
/// last-error state as it was. Unknown (unchanged) with a static runtime.
void read_runtime_attributes(const void* stub, ProfiledLaunch& l, bool verbose);

}  // namespace gpuscope::collect::detail
