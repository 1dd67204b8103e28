// peak: measures the real ceilings of one GPU (the engine of `gpuscope peak`).
//
// measure() runs one microbenchmark per ceiling of ceiling_catalog()
// (core/machine_profile.hpp) — or only the catalog's `quick` ones — in catalog order
// and returns them as a MachineProfile: measured value in the catalog unit, theoretical
// value at the clock observed during that measurement (peak/device_specs.hpp), datasheet
// value where the GPU model is known, samples, spread, clocks, throttling, and whether the
// result checksum matched the host's expectation. The method of each measurement is
// method_summary() (also `gpuscope peak --help` and docs/metrics.md). The DRAM and tensor
// ceilings are each the best of a coarse-to-fine sweep over methods and configurations
// within a time budget (peak/sweep.hpp); their method line lists every method's result.
// When tensor_fp16 comes out below tensor_bf16, its method line says why, from the clocks.
//
// Timing: every GPU-timed measurement goes through the timing engine
// (include/gpuscope/bench.hpp): warm-up, CUDA events, median, stop on the relative
// standard error or the per-benchmark budget; hot timings back to back (an untimed call
// right before each timed one, so no launch gap sits inside a sample). The two host-side round trips
// (launch_latency, stream_sync) are timed with std::chrono::steady_clock (median of
// repetitions), since a CUDA event cannot see the host.
//
// Budgets: full run about 0.5 s of samples per measurement plus the sweeps' coarse budgets
// (3 s per DRAM ceiling, 2.5 s per tensor ceiling), under 60 s in all on an H100/H200;
// quick run about 0.2 s each (sweeps 0.8 s / 1.2 s), under 15 s.
//
// Clocks are read (NVML), never changed. A GPU used by another process gets a warning in
// MachineProfile::warnings, as do ceilings that could not be measured (no cuBLASLt, a
// single GPU for p2p) and anything that failed.
//
// Errors: NoGpuError when the CUDA driver or a GPU is missing, or `device` is out of
// range; bench::CudaError for a CUDA failure during a measurement that leaves the
// device unusable. A failure confined to one ceiling (e.g. a cuBLASLt type the GPU does
// not support) is recorded as a warning and the run goes on.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/machine_profile.hpp"

namespace gpuscope::peak {

struct PeakOptions {
  int device = 0;      // CUDA device ordinal (after CUDA_VISIBLE_DEVICES)
  bool quick = false;  // only the catalog's quick ceilings, shorter budgets
};

/// Called after each ceiling is measured (index counts from 1 up to total) — and with
/// a ceiling whose `measured` is NaN and `method` says why when one could not be
/// measured. Runs on the measuring thread; must not throw.
using Progress = std::function<void(const Ceiling& ceiling, std::size_t index, std::size_t total)>;

/// No usable GPU: the message says what is missing and what to check.
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Measures the GPU `options.device` (see the file comment).
[[nodiscard]] MachineProfile measure(const PeakOptions& options, const Progress& progress = {});

/// One line per ceiling name: how gpuscope peak measures it (for --help and the docs).
struct MethodSummary {
  std::string_view ceiling;
  std::string_view method;
};
[[nodiscard]] std::span<const MethodSummary> method_summary();

}  // namespace gpuscope::peak
