// monitor_source: where `gpuscope monitor` gets its frames (core/monitor_model.hpp).
//  - the GPU source: CUPTI PM sampling of every visible GPU (collect/pm_sampler.hpp, in this
//    process: the GPU's own counters, every process's work) averaged over each refresh, beside
//    NVML's readings and processes (bench/nvml.hpp);
//  - the replay source: frames recorded by `gpuscope monitor --format json` (a file), given
//    back one per refresh: the screen, keys, line mode and json are tested with it, no GPU.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/monitor_model.hpp"

namespace gpuscope::cli {

class MonitorSource {
 public:
  virtual ~MonitorSource() = default;
  /// The GPUs, fixed for the run.
  [[nodiscard]] virtual const std::vector<core::MonitorGpu>& gpus() const = 0;
  /// Lines for the user about what cannot be shown and why (counters not permitted, held by
  /// another profiler), with what to do.
  [[nodiscard]] virtual const std::vector<std::string>& notes() const = 0;
  /// The frame since the previous call (the GPU source averages its samples over that time);
  /// `time_s`: seconds since the monitor started. nullopt when a recording has ended.
  [[nodiscard]] virtual std::optional<core::MonitorFrame> frame(double time_s) = 0;
};

/// No GPU could be seen (no driver, no device): what() says which, and what to do.
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GpuSourceOptions {
  double sample_rate_hz = 100;  // PM sampling rate; frames average its samples
  bool counters = true;         // false: NVML only (--no-counters)
};

/// Every visible GPU. Throws NoGpuError when there is none; counters that cannot be sampled
/// are notes, not errors.
[[nodiscard]] std::unique_ptr<MonitorSource> open_gpu_source(const GpuSourceOptions& options);

/// A recording (`--format json` output). Throws std::runtime_error when it cannot be read.
[[nodiscard]] std::unique_ptr<MonitorSource> open_replay_source(const std::string& path);

}  // namespace gpuscope::cli
