// monitor_record: `gpuscope monitor --record FILE` — the frames saved as a trace that
// `stats`, `report` and `export` read. Nothing new in the schema: the frames are written as
// the PM sampler's event-log records (core/event_log_format.hpp: one GpuMetricsSessionRecord
// per GPU, one GpuMetricSampleRecord per GPU and frame, spanning the frame's interval) and
// imported by store/importer.hpp into gpu_metrics, gpu_metric_names and gpu_metrics_sessions.
// Values per frame: the counters as the sampler names them (percentages as they are, bytes
// = rate × interval, the clock in Hz) and NVML's readings (core::kMonitorNvmlMetrics:
// utilization %, power W, temperature °C, memory used B). Every process NVML saw on a GPU
// becomes a processes row (a log of its own with a ProcessRecord: start_ns / end_ns = first
// and last frame it was seen in, its command line).
// Times are on CLOCK_REALTIME in ns, the trace clock of `gpuscope trace`.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/monitor_model.hpp"
#include "store/event_log_writer.hpp"

namespace gpuscope::cli {

class MonitorRecorder {
 public:
  /// Prepares to write `trace_path` (which must not exist: throws std::runtime_error, as when
  /// the logs' folder cannot be made). `interval_s`: the refresh interval.
  MonitorRecorder(std::string trace_path, const std::vector<core::MonitorGpu>& gpus, double interval_s,
                  std::string command);
  ~MonitorRecorder();
  MonitorRecorder(const MonitorRecorder&) = delete;
  MonitorRecorder& operator=(const MonitorRecorder&) = delete;

  /// Adds a frame that ended at `end_ns` (CLOCK_REALTIME) and began at `start_ns`.
  void add(const core::MonitorFrame& frame, std::uint64_t start_ns, std::uint64_t end_ns);
  /// Writes the trace; returns a line for the user ("recorded N frames of M GPUs to FILE").
  /// Throws std::runtime_error when the import fails.
  std::string finish();

 private:
  struct SeenProcess {
    std::string command;
    std::uint64_t first_ns = 0;
    std::uint64_t last_ns = 0;
  };
  std::string m_trace;
  std::string m_dir;
  std::string m_command;
  std::vector<core::MonitorGpu> m_gpus;
  store::EventLogWriter m_writer;
  std::map<std::uint32_t, SeenProcess> m_processes;
  std::uint64_t m_frames = 0;
  bool m_finished = false;
};

/// CLOCK_REALTIME in ns (the trace clock).
[[nodiscard]] std::uint64_t realtime_ns();

}  // namespace gpuscope::cli
