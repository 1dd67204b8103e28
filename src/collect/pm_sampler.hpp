// pm_sampler: hardware counters of whole GPUs over time, for `gpuscope trace --gpu-metrics`
// (CUPTI PM sampling, cupti_pmsampling.h, CUDA 12.6+; the counters nsys --gpu-metrics-device
// samples). Runs in the launcher, not in the traced process: a GPU's counters count the work
// of every process on it, the target carries no sampling work, and the target's own CUPTI
// client (one per process) is untouched.
//
// Per device (CUDA ordinal of the launcher, every visible one):
//   cuInit -> cuptiProfilerInitialize -> cuptiDeviceGetChipName -> cuptiPmSamplingGetCounterAvailability
//   -> cuptiProfilerHostInitialize(PM_SAMPLING) + ConfigAddMetrics + GetConfigImage + GetNumOfPasses
//      (metrics dropped from the end of the list, optional ones first, until one pass takes them)
//   -> cuptiPmSamplingEnable -> SetConfig(GPU time interval, keep-oldest hardware buffer)
//   -> GetCounterDataSize + CounterDataImageInitialize -> Start.
// A decode thread calls cuptiPmSamplingDecodeData every decode period, reads each completed
// sample (CounterDataGetSampleInfo: start/end; cuptiProfilerHostEvaluateToGpuValues: values),
// writes it as a GpuMetricSampleRecord into its own event log in the run's log folder, and
// re-initializes the counter data image. stop() stops sampling, decodes what is left, and
// closes the log. The config image stays alive while sampling (CUPTI keeps its pointer).
//
// Clock: CUPTI gives sample timestamps in ns on the GPU's timer; the session records the offset
// that puts them on the CUPTI clock of the trace (GpuMetricsSessionRecord.clock_offset_ns).
//
// Errors never stop the trace: a device that cannot be sampled (no driver, chip without PM
// sampling, counters restricted to administrators: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, counters
// held by ncu/DCGM: CUPTI_ERROR_HARDWARE_BUSY, MIG) is skipped with a message that says what to
// do; a hardware-buffer overflow is counted (DataLossRecord "gpu_metrics_overflow").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpuscope::collect {

/// The sampler's log in a run's log folder is <prefix><host>-<pid>.gslog.
inline constexpr const char* kGpuMetricsLogPrefix = "gpu-metrics-";

/// One sample as the sampler keeps it (PmSamplerOptions::on_sample): values over [start_ns,
/// end_ns) on the CUPTI clock of device `device`, `values[i]` of `(*metrics)[i]` (NaN where
/// CUPTI could not evaluate it). Valid only during the call.
struct PmSample {
  int device = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  const std::vector<std::string>* metrics = nullptr;
  const double* values = nullptr;
};

struct PmSamplerOptions {
  std::uint64_t interval_ns = 100'000;  // 10 kHz
  std::vector<std::string> metrics;     // empty = core::kGpuMetrics
  std::uint64_t hardware_buffer_bytes = 256ull << 20;
  std::uint32_t decode_period_ms = 20;
  // Validation only (GPUSCOPE_GPU_METRICS_DUTY_MS, validation/duty_cost.py): sample while
  // floor(CUPTI clock / duty) is even, pause while odd; 0 = always on.
  std::uint32_t duty_ms = 0;
  bool verbose = false;
  // Live readers (`gpuscope monitor`): called on the evaluator thread with every sample
  // written to the log; must be quick and must not throw.
  std::function<void(const PmSample&)> on_sample;
};

class PmSampler {
 public:
  PmSampler();
  ~PmSampler();  // stop()
  PmSampler(const PmSampler&) = delete;
  PmSampler& operator=(const PmSampler&) = delete;

  /// Starts sampling every visible GPU, writing to `log_path` (created, never clobbered).
  /// Returns the number of devices sampled; what went wrong for the others (and why none
  /// could be sampled) is in *messages, one line each, with what to do.
  std::size_t start(const std::string& log_path, const PmSamplerOptions& options, std::vector<std::string>* messages);
  /// Stops sampling, decodes the rest, closes the log. Idempotent. Lines for the user
  /// (overflow, samples written) are appended to *messages when given.
  void stop(std::vector<std::string>* messages = nullptr);

  /// Samples written so far (all devices).
  [[nodiscard]] std::uint64_t samples() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

/// The highest --gpu-metrics rate: at 10 kHz each of the sampler's two threads is ~63 % busy on
/// H100 with GH100's 13 metrics (docs/validation.md); at 100 kHz the hardware buffer overflowed
/// within 0.1 s. Above ~15 kHz samples may be lost, which is reported (gpu_metrics_overflow).
inline constexpr double kMaxSamplingRateHz = 20'000;

/// "20k", "20kHz", "500", "1.5k" -> Hz; false when not a rate in [10 Hz, kMaxSamplingRateHz].
[[nodiscard]] bool parse_sampling_rate(const std::string& text, double* hz);

}  // namespace gpuscope::collect
