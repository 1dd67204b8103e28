// gpuscope/bench.hpp — time GPU work the right way (the engine behind `gpuscope bench`
// and `gpuscope peak`).
//
// time_gpu() times a callable that enqueues GPU work on the stream it is given, in one
// of three modes (after `warmup_launches` untimed calls, so module load, JIT and handle
// creation stay out of the samples):
//
//   kCold   one call per sample, CUDA events around it; before each sample the L2 is
//           flushed, outside the events, by a kernel that reads a scratch buffer of
//           2 × the L2 size (allocated once per device and kept): the call's data is
//           evicted and the L2 left holding clean lines, so no write-back of the flush
//           lands inside the timed call (bench/l2_flush.hpp says why not a memset).
//   kHot    `batch` back-to-back calls per sample between two events; a sample is
//           (event time) / batch. Includes launch overhead where the GPU outruns the CPU.
//   kGraph  `batch` calls captured once into a CUDA graph (cudaStreamBeginCapture, global
//           capture mode), replayed per sample with cudaGraphLaunch; a sample is
//           (event time) / batch, so launch overhead disappears (the method for small
//           kernels). The callable must be capturable (no synchronous calls).
//   batch = 0 picks it: enough calls that one sample lasts >= 100 µs (from the warm-up
//   timing), at most 10,000; kCold ignores batch. With back_to_back (kHot, kGraph) an
//   untimed batch runs right before each timed one, so the GPU is already busy when the
//   timed batch is launched (no launch-latency gap inside the sample).
//
// Warm-up: at least `warmup_launches` calls and at least `warmup_s` seconds of calls
// (an idle GPU runs at a low clock and needs a few ms of work to ramp up).
//
// Stopping rule (core/sample_stats.hpp, one function): samples are taken until the
// relative standard error of the median is <= max_rel_stderr (with at least min_samples
// samples), or the time budget is spent, or max_samples are reached — whichever comes
// first; `stop` says which.
//
// Clocks: with a working NVML (dlopen("libnvidia-ml.so.1")) the SM clock is read before
// the first sample and after every sample; a sample after which it read below 97 % of
// the clock before the run is counted in throttled_samples. Without NVML the SM clock is
// measured on the GPU (clock64 against %globaltimer, src/bench/clock_probe.hpp) before
// and after the run, and when it fell below 97 % every sample counts as throttled (which
// ones is unknown). mem_clock_mhz needs NVML (NaN without). Clocks are never changed.
//
// Units: seconds for every time in TimingResult (per call, i.e. divided by batch).
//
// Errors: throws gpuscope::bench::CudaError (a std::runtime_error naming the failed CUDA
// call, file and line) for any CUDA failure, including one raised by the callable's work;
// std::invalid_argument for options out of range (min_samples < 1, budget_s <= 0, ...).
//
// Sources: the method of NVBench (cold/batch measurements, L2 flush, noise-based stop)
// and triton.testing.do_bench (warm-up, L2 flush, median); CUDA Runtime API events and
// stream capture.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::bench {

enum class Mode { kCold, kHot, kGraph };

/// "cold", "hot", "graph" ↔ Mode. parse_mode throws std::invalid_argument for other text.
[[nodiscard]] std::string_view mode_name(Mode mode);
[[nodiscard]] Mode parse_mode(std::string_view text);

enum class StopReason { kConverged, kBudget, kMaxSamples };
/// "converged", "budget", "max_samples".
[[nodiscard]] std::string_view stop_reason_name(StopReason reason);

struct TimingOptions {
  Mode mode = Mode::kCold;
  int batch = 0;                  // calls per sample in kHot/kGraph; 0 = auto (see above)
  int warmup_launches = 3;        // untimed calls before the first sample (>= 1)
  double warmup_s = 0.025;        // ...and untimed calls go on until this much time has
                                  // passed (>= 0), so the GPU leaves its idle clocks first
  double max_rel_stderr = 0.005;  // stop when stderr(median) / median <= this
  double budget_s = 1.0;          // wall-clock budget for the samples (warm-up excluded)
  int min_samples = 10;           // never stop before this many samples
  int max_samples = 100000;       // never take more
  cudaStream_t stream = nullptr;  // nullptr: the engine creates (and destroys) a
                                  // non-blocking stream on the current device
  bool back_to_back = false;      // kHot/kGraph: enqueue one untimed batch (kGraph: one
                                  // untimed replay) right before each timed one, so the GPU
                                  // is busy when the start event is recorded and the latency
                                  // of launching the timed batch stays out of the sample: the
                                  // steady state of a stream of calls (`gpuscope bench` sets
                                  // it). Doubles the GPU time per sample. kCold ignores it.
};

struct TimingResult {
  Mode mode = Mode::kCold;
  int batch = 1;                  // calls per sample actually used
  std::vector<double> samples_s;  // per call, in the order taken
  double min_s = 0, median_s = 0, mean_s = 0;
  double stddev_s = 0;    // unbiased; NaN with fewer than 2 samples
  double rel_stderr = 0;  // relative standard error of the median
  StopReason stop = StopReason::kConverged;
  double elapsed_s = 0;            // wall time spent sampling
  double sm_clock_mhz_before = 0;  // NaN without NVML
  double sm_clock_mhz_after = 0;
  double mem_clock_mhz = 0;  // NaN without NVML
  int throttled_samples = 0;
};

/// Enqueues the work to time on `stream`. Must not synchronize the device.
using Enqueue = std::function<void(cudaStream_t stream)>;

/// Times `enqueue` on the current device (see the file comment). Synchronizes the
/// stream before returning.
[[nodiscard]] TimingResult time_gpu(const Enqueue& enqueue, const TimingOptions& options = {});

/// A failed CUDA runtime call: "cudaMalloc(&p, n) failed at bench/timer.cpp:42:
/// out of memory (cudaErrorMemoryAllocation)".
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t status, std::string_view call, std::string_view file, int line);
  [[nodiscard]] cudaError_t status() const noexcept { return m_status; }

 private:
  cudaError_t m_status;
};

}  // namespace gpuscope::bench

/// Checks a CUDA runtime call; throws gpuscope::bench::CudaError naming the call.
#define GPUSCOPE_CUDA_CALL(call)                                                       \
  do {                                                                                 \
    const cudaError_t gpuscope_status_ = (call);                                       \
    if (gpuscope_status_ != cudaSuccess)                                               \
      throw ::gpuscope::bench::CudaError(gpuscope_status_, #call, __FILE__, __LINE__); \
  } while (0)
