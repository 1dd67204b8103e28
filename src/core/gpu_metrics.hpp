// core/gpu_metrics: the hardware counters `gpuscope trace --gpu-metrics` samples over time
// (CUPTI PM sampling, cupti_pmsampling.h), named as Nsight Compute names them, with the
// short label and unit every report, table and timeline uses. Pure, no I/O.
//
// The default list was packed for one PM-sampling pass on GH100 (cuptiProfilerHostGetNumOfPasses
// = 1 for all of them together; `sm__inst_executed_realtime` makes it 2). The sampler drops
// metrics from the end of the list (kOptional ones first) until the chip takes the rest in
// one pass, and says which it dropped.
//
// Kinds of values (per sample, over the sample's interval):
//   kPercent  a percentage of the peak sustained rate over the elapsed time (.pct_of_peak_sustained_elapsed)
//   kBytes    bytes moved in the interval (.sum): GB/s = bytes / interval
//   kHertz    cycles per second (.per_second): the clock
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace gpuscope::core {

// The metrics reports name directly (the rest are read from kGpuMetrics).
namespace gpu_metric {
inline constexpr std::string_view kSmActive = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kWarpsActive = "sm__warps_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kTensorActive =
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kDramRead = "dram__bytes_read.sum";
inline constexpr std::string_view kDramWrite = "dram__bytes_write.sum";
inline constexpr std::string_view kSmClock = "gpc__cycles_elapsed.avg.per_second";
inline constexpr std::string_view kL2Bytes = "lts__t_bytes.sum";
inline constexpr std::string_view kFmaPipe =
    "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kFp64Pipe =
    "TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed";
}  // namespace gpu_metric

enum class GpuMetricKind { kPercent, kBytes, kHertz, kLevel };  // kLevel: a reading at the sample (W, °C, B)

struct GpuMetricDef {
  std::string_view name;   // Nsight Compute / CUPTI metric name
  std::string_view label;  // short column / counter-track name
  std::string_view unit;   // "%", "bytes", "Hz"
  GpuMetricKind kind;
  bool optional;  // dropped first when the chip cannot take the list in one pass
  std::string_view meaning;
};

// clang-format off
inline constexpr std::array<GpuMetricDef, 15> kGpuMetrics{{
  {gpu_metric::kSmActive, "SM active", "%", GpuMetricKind::kPercent, false,
   "cycles with at least one warp resident on the SM, averaged over SMs: how much of the GPU has work (not how busy its pipes are)"},
  {gpu_metric::kWarpsActive, "warps active", "%", GpuMetricKind::kPercent, false,
   "resident warps over the SMs' maximum, averaged over elapsed cycles: achieved occupancy over time"},
  {gpu_metric::kTensorActive, "tensor active", "%", GpuMetricKind::kPercent, false,
   "cycles the tensor-core pipe is busy: how much of the tensor-core peak is used"},
  {gpu_metric::kDramRead, "DRAM read", "bytes", GpuMetricKind::kBytes, false,
   "bytes read from device memory (HBM) in the sample"},
  {gpu_metric::kDramWrite, "DRAM write", "bytes", GpuMetricKind::kBytes, false,
   "bytes written to device memory (HBM) in the sample"},
  {gpu_metric::kSmClock, "SM clock", "Hz", GpuMetricKind::kHertz, false,
   "GPC (SM) clock frequency over the sample"},
  {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", "GR active", "%", GpuMetricKind::kPercent, false,
   "cycles the graphics/compute engine has work: the GPU-busy figure of nvidia-smi, at sample resolution"},
  {gpu_metric::kL2Bytes, "L2 bytes", "bytes", GpuMetricKind::kBytes, false,
   "bytes through the L2 cache slices (all requests) in the sample"},
  {gpu_metric::kFmaPipe, "FMA pipe", "%", GpuMetricKind::kPercent, true,
   "FP32 FMA-pipe instructions issued over the pipe's peak issue rate (FP32 CUDA-core use)"},
  {gpu_metric::kFp64Pipe, "FP64 pipe", "%", GpuMetricKind::kPercent, true,
   "cycles the FP64 pipe is busy"},
  {"pcie__read_bytes.sum", "PCIe read", "bytes", GpuMetricKind::kBytes, true,
   "bytes the GPU read over PCIe (host to device traffic) in the sample"},
  {"pcie__write_bytes.sum", "PCIe write", "bytes", GpuMetricKind::kBytes, true,
   "bytes the GPU wrote over PCIe (device to host traffic) in the sample"},
  {"nvlrx__bytes.sum", "NVLink rx", "bytes", GpuMetricKind::kBytes, true,
   "bytes received over NVLink in the sample (0 without NVLink peers)"},
  {"nvltx__bytes.sum", "NVLink tx", "bytes", GpuMetricKind::kBytes, true,
   "bytes sent over NVLink in the sample"},
  {"TPC.TriageCompute.tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed", "TPC warps active", "%", GpuMetricKind::kPercent, true,
   "resident warps per TPC over the maximum, realtime counter (cross-check of warps active)"},
}};

// NVML's readings that `gpuscope monitor --record` stores beside the counters, one per
// refresh (bench/nvml.hpp); the sampler never asks CUPTI for these.
inline constexpr std::array<GpuMetricDef, 4> kMonitorNvmlMetrics{{
  {"nvml:utilization.gpu", "NVML util", "%", GpuMetricKind::kPercent, false,
   "nvmlDeviceGetUtilizationRates: share of NVML's sample period in which any kernel ran (nvidia-smi's GPU-Util), not how much of the GPU it used"},
  {"nvml:power.draw", "power", "W", GpuMetricKind::kLevel, false,
   "nvmlDeviceGetPowerUsage: board power draw at the end of the sample"},
  {"nvml:temperature.gpu", "temperature", "°C", GpuMetricKind::kLevel, false,
   "nvmlDeviceGetTemperature: GPU die temperature at the end of the sample"},
  {"nvml:memory.used", "memory used", "B", GpuMetricKind::kLevel, false,
   "nvmlDeviceGetMemoryInfo: device memory in use (every process) at the end of the sample"},
}};
// clang-format on

/// The definition of `name` (kGpuMetrics, then kMonitorNvmlMetrics), or nullopt for a metric
/// outside both (a user's own).
[[nodiscard]] constexpr std::optional<GpuMetricDef> gpu_metric_def(std::string_view name) {
  for (const GpuMetricDef& d : kGpuMetrics) {
    if (d.name == name) return d;
  }
  for (const GpuMetricDef& d : kMonitorNvmlMetrics) {
    if (d.name == name) return d;
  }
  return std::nullopt;
}

/// The unit of any metric name by its suffix, for names outside kGpuMetrics:
/// pct_of_peak... -> "%", .per_second -> "1/s", bytes -> "bytes", else "" (a count).
[[nodiscard]] constexpr std::string_view gpu_metric_unit(std::string_view name) {
  if (const auto d = gpu_metric_def(name)) return d->unit;
  if (name.find(".pct_of_peak") != std::string_view::npos) return "%";
  if (name.ends_with(".per_second")) return "1/s";
  if (name.find("bytes") != std::string_view::npos) return "bytes";
  return "";
}

}  // namespace gpuscope::core
