// device_facts: what `gpuscope bench` (and any other GPU-side command) records about the
// GPU it ran on — DeviceFacts (core/machine_profile.hpp), the same fields a machine
// profile holds, so a bench result and a profile can be matched by UUID.
//
// Sources: cudaGetDeviceProperties (name, uuid, SM count, memory, L2, shared memory per
// SM, bus width), cudaDeviceGetAttribute (cudaDevAttrClockRate and
// cudaDevAttrMemoryClockRate, kHz → MHz), NVML's driver version (bench/nvml.hpp; else
// cudaDriverGetVersion as a number) and cudaRuntimeGetVersion. The UUID is written as
// nvidia-smi writes it: "GPU-" + 8-4-4-4-12 lowercase hex digits.
//
// Errors: gpuscope::bench::CudaError (gpuscope/bench.hpp) for a failed CUDA call — among
// them cudaErrorNoDevice / cudaErrorInsufficientDriver where there is no usable GPU;
// cuda_device_problem() puts that into words first.
#pragma once

#include <string>

#include "core/machine_profile.hpp"

namespace gpuscope::bench {

/// The facts of CUDA device `device` (an ordinal after CUDA_VISIBLE_DEVICES).
[[nodiscard]] DeviceFacts query_device_facts(int device);

/// "" when CUDA device `device` can be used; otherwise one sentence saying why not
/// ("no CUDA-capable GPU was found (cudaGetDeviceCount: no CUDA-capable device is
/// detected)", "device 3 does not exist: 1 GPU visible"). Never throws.
[[nodiscard]] std::string cuda_device_problem(int device);

}  // namespace gpuscope::bench
