// clock_probe: the SM clock the GPU is running at, measured on the GPU itself.
//
// A one-warp kernel reads clock64() (SM cycles) and %globaltimer (ns) at its start,
// spins for `spin_ns`, and reads both again: MHz = Δcycles / Δns × 1000. This is the
// clock kernels actually ran at — what a theoretical rate must be computed with — and
// needs no NVML (which may be missing or, inside some containers, answer with zeros).
// Resolution: %globaltimer ticks in ≤ 1 µs steps, so the default 1 ms spin reads the
// clock to about 0.1 %. The probe itself is 1 ms of one-warp work: it does not raise
// clocks the way a full-chip load does (run it right after the measured work).
//
// Errors: throws bench::CudaError (include/gpuscope/bench.hpp) when the launch fails.
#pragma once

#include <cuda_runtime_api.h>

namespace gpuscope::bench {

/// Measured SM clock in MHz on the current device (synchronizes `stream`).
[[nodiscard]] double probe_sm_clock_mhz(cudaStream_t stream = nullptr, double spin_ns = 1e6);

}  // namespace gpuscope::bench
