// Test helper: a small trace with sampled GPU metrics (as `gpuscope trace --gpu-metrics`
// writes them), built through the typed row writer (trace_db.hpp), with numbers chosen to
// be checked by hand. Shared by the gpu_metrics_sum, top/gpu_util and timeline tests.
//
// pid 100 on one H100 (device 0, uuid "GPU-100"), capture window and process [0, 1 ms)
// after kT0. Samples every 100 µs, i = 0..9, sample 7 missing (a gap: the hardware buffer
// overflowed); in sample i:
//   SM active 10·i %, warps active 50 %, tensor active 5·i % (NULL in sample 6),
//   DRAM read 10^7·(i+1) bytes (100·(i+1) GB/s), DRAM write 5·10^6 bytes (50 GB/s),
//   SM clock 1.98 GHz, L2 2·10^7 bytes (200 GB/s); with_fma: FMA pipe 25 %.
// Kernels (µs after kT0): gemm [50, 250) and [300, 350) on stream 7, relu [320, 340) on
// stream 8 (inside the second gemm), late [650, 800) on stream 7 (half in sample 6, half in
// the gap).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/gpu_metrics.hpp"
#include "trace_db.hpp"

namespace gpuscope::test {

inline constexpr std::int64_t kMetricsT0 = 1'000'000'000;
inline constexpr std::int64_t kMetricsUs = 1000;

/// The metric rows (ids 1..) of `names`, labels and units from core/gpu_metrics.hpp.
inline void add_metric_names(TraceDb& t, std::initializer_list<std::string_view> names) {
  std::int64_t id = 0;
  for (std::string_view name : names) {
    const auto def = core::gpu_metric_def(name);
    t.add(rows::GpuMetricName{.id = ++id, .name = name, .label = def->label, .unit = def->unit});
  }
}

/// A session row for device `device` (interval 100 µs).
inline rows::GpuMetricsSession metrics_session(std::int64_t device, std::string_view uuid, std::int64_t samples) {
  return {.device_id = device,
          .chip = "GH100",
          .device_name = "NVIDIA H100 80GB HBM3",
          .uuid = uuid,
          .start_ns = kMetricsT0,
          .interval_ns = 100 * kMetricsUs,
          .samples = samples,
          .first_ns = kMetricsT0,
          .last_ns = kMetricsT0 + 1000 * kMetricsUs,
          .clock_offset_ns = 0,
          .hardware_buffer_bytes = 64 << 20,
          .metrics = 8};
}

/// The trace of the file comment; without metrics: the same processes and kernels only.
inline void build_metrics_trace(TraceDb& t, bool with_metrics = true, bool with_fma = false) {
  constexpr std::int64_t T0 = kMetricsT0, us = kMetricsUs;
  t.add(rows::Process{
      .pid = 100, .exe = "/usr/bin/python3", .start_ns = T0, .end_ns = T0 + 1000 * us, .ended_cleanly = 1});
  t.add(rows::CaptureWindow{.pid = 100, .start_ns = T0, .end_ns = T0 + 1000 * us, .reason = "all"});
  t.h100(100);
  t.strings({{1, "gemm"}, {2, "relu"}, {3, "late"}});
  t.kernel(100, 0, 7, 1, T0 + 50 * us, T0 + 250 * us, 1);
  t.kernel(100, 0, 7, 2, T0 + 300 * us, T0 + 350 * us, 1);
  t.kernel(100, 0, 8, 3, T0 + 320 * us, T0 + 340 * us, 2);
  t.kernel(100, 0, 7, 4, T0 + 650 * us, T0 + 800 * us, 3);
  if (!with_metrics) return;
  if (with_fma) {
    add_metric_names(
        t, {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_elapsed",
            "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum",
            "dram__bytes_write.sum", "gpc__cycles_elapsed.avg.per_second", "lts__t_bytes.sum",
            "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed"});
  } else {
    add_metric_names(
        t, {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_elapsed",
            "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum",
            "dram__bytes_write.sum", "gpc__cycles_elapsed.avg.per_second", "lts__t_bytes.sum"});
  }
  t.add(metrics_session(0, "GPU-100", 9));
  store::RowWriter<rows::GpuMetric> w(t.db());
  for (std::int64_t i = 0; i < 10; ++i) {
    if (i == 7) continue;
    const std::int64_t start = T0 + i * 100 * us, end = start + 100 * us;
    const auto sample = [&](std::int64_t metric, std::optional<double> value) {
      w.insert({.device_id = 0, .start_ns = start, .end_ns = end, .metric_id = metric, .value = value});
    };
    sample(1, 10.0 * static_cast<double>(i));
    sample(2, 50.0);
    sample(3, i == 6 ? std::nullopt : std::optional(5.0 * static_cast<double>(i)));
    sample(4, 1e7 * static_cast<double>(i + 1));
    sample(5, 5e6);
    sample(6, 1.98e9);
    sample(7, 2e7);
    if (with_fma) sample(8, 25.0);
  }
}

}  // namespace gpuscope::test
