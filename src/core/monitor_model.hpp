// monitor_model: what `gpuscope monitor` shows, as plain values, and the last 60 s of it.
//
// A MonitorFrame is one refresh: per GPU a MonitorSample (the GPU's own counters averaged
// over the refresh interval, from CUPTI PM sampling, beside NVML's readings) and the
// processes NVML sees on the GPUs. Values are in base units and NaN when unknown:
// percentages in %, rates in bytes/s, clock in Hz, power in W, temperature in °C, memory in
// bytes. MonitorModel keeps the frames of the last `window_s` seconds per GPU (a ring) for
// the sparklines. Pure: no I/O, no clock (times are passed in), testable without a GPU.
#pragma once

#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

namespace gpuscope::core {

inline constexpr double kMonitorUnknown = std::numeric_limits<double>::quiet_NaN();

/// One GPU over one refresh interval.
struct MonitorSample {
  int device = 0;                                  // CUDA ordinal
  double sm_active_pct = kMonitorUnknown;          // sm__cycles_active: SMs with a resident warp
  double warps_active_pct = kMonitorUnknown;       // sm__warps_active: achieved occupancy
  double tensor_active_pct = kMonitorUnknown;      // sm__pipe_tensor_cycles_active_realtime
  double dram_bytes_per_s = kMonitorUnknown;       // dram__bytes_read + _write per second
  double dram_read_bytes_per_s = kMonitorUnknown;  // dram__bytes_read per second
  double dram_write_bytes_per_s = kMonitorUnknown;
  double pcie_rx_bytes_per_s = kMonitorUnknown;    // pcie__read_bytes per second (host to device)
  double pcie_tx_bytes_per_s = kMonitorUnknown;    // pcie__write_bytes per second
  double nvlink_rx_bytes_per_s = kMonitorUnknown;  // nvlrx__bytes per second
  double nvlink_tx_bytes_per_s = kMonitorUnknown;  // nvltx__bytes per second
  double sm_clock_hz = kMonitorUnknown;            // gpc__cycles_elapsed.per_second, else NVML
  double nvml_util_pct = kMonitorUnknown;          // nvmlDeviceGetUtilizationRates().gpu
  double power_w = kMonitorUnknown;                // nvmlDeviceGetPowerUsage
  double temperature_c = kMonitorUnknown;          // nvmlDeviceGetTemperature (GPU die)
  double memory_used_bytes = kMonitorUnknown;      // nvmlDeviceGetMemoryInfo
  double memory_total_bytes = kMonitorUnknown;
  bool counters = false;  // the PM-sampling fields above come from the GPU's counters
};

/// A process with memory on a GPU (nvmlDeviceGetComputeRunningProcesses).
struct MonitorProcess {
  int device = 0;
  std::uint32_t pid = 0;
  std::string user;     // from /proc/PID/status Uid, "" when unknown
  std::string command;  // /proc/PID/cmdline, arguments joined by spaces
  double gpu_memory_bytes = kMonitorUnknown;
};

/// What is fixed about a GPU during a run.
struct MonitorGpu {
  int device = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-8c1f..."
  // DRAM bytes/s the percentages are of, and where it comes from ("measured by gpuscope
  // peak" or "theoretical"); NaN when neither is known.
  double dram_ceiling_bytes_per_s = kMonitorUnknown;
  std::string dram_ceiling_source;
};

/// One refresh: time since the monitor started, and every GPU.
struct MonitorFrame {
  double time_s = 0;
  std::vector<MonitorSample> samples;  // one per GPU, in MonitorGpu order
  std::vector<MonitorProcess> processes;
};

/// The fields a sparkline or a history can show.
enum class MonitorField { kSmActive, kWarpsActive, kTensorActive, kDram, kNvmlUtil, kPower };

/// The value of `field` in `s` (NaN when unknown).
[[nodiscard]] double monitor_field(const MonitorSample& s, MonitorField field);

/// The frames of the last `window_s` seconds. Frames must come in time order.
class MonitorModel {
 public:
  explicit MonitorModel(std::vector<MonitorGpu> gpus, double window_s = 60.0)
      : m_gpus(std::move(gpus)), m_window_s(window_s) {}

  /// Adds a frame; frames older than window_s before it are dropped.
  void push(MonitorFrame frame);

  [[nodiscard]] const std::vector<MonitorGpu>& gpus() const { return m_gpus; }
  [[nodiscard]] const std::deque<MonitorFrame>& frames() const { return m_frames; }
  /// The newest frame, or nullptr before the first.
  [[nodiscard]] const MonitorFrame* latest() const { return m_frames.empty() ? nullptr : &m_frames.back(); }
  /// `field` of GPU `gpu_index` (index into gpus()) in every kept frame, oldest first (NaN where
  /// a frame lacks it).
  [[nodiscard]] std::vector<double> history(std::size_t gpu_index, MonitorField field) const;
  [[nodiscard]] double window_s() const { return m_window_s; }

 private:
  std::vector<MonitorGpu> m_gpus;
  double m_window_s;
  std::deque<MonitorFrame> m_frames;
};

/// `values` drawn as `width` block characters (▁▂▃▄▅▆▇█, UTF-8), scaled from 0 to `max`: with
/// more values than columns, each column is the mean of its consecutive share of them (the
/// whole window fits); with fewer, right-aligned (spaces before); an unknown value is a space.
/// `max` <= 0 or NaN: scaled to the largest (column) value.
[[nodiscard]] std::string sparkline(const std::vector<double>& values, std::size_t width, double max);

}  // namespace gpuscope::core
