// The importer's first pass over one event log (LogScan) and the capture windows it
// yields. Pass 2 (store/event_tables.hpp) needs these before it can clip or join:
// the time span of the log, whether the process closed it, how many kernel records it
// holds, each API call's start and thread by correlation id, and the capture edges; and
// for the GPU-metrics sampler's log (store/gpu_metrics_tables.hpp) its sessions.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/event_log_format.hpp"
#include "store/event_log_reader.hpp"

namespace gpuscope::store::detail {

/// An end that never came (a window never stopped, a process with no timestamps).
inline constexpr std::uint64_t kOpenEnd = std::numeric_limits<std::uint64_t>::max();

/// A capture window [start, end) of one process; end = kOpenEnd when never stopped.
struct Window {
  std::uint64_t start = 0;
  std::uint64_t end = kOpenEnd;
  std::string reason;  // capture_windows.reason
};

struct CaptureEdge {
  std::uint64_t ts = 0;
  bool start = false;
  std::string reason;
};

struct ApiInfo {
  std::uint64_t start_ns = 0;
  std::uint32_t tid = 0;
};

/// Pass 1: reads nothing into the database.
class LogScan final : public EventLogVisitor {
 public:
  explicit LogScan(const EventLogReader& reader) : m_reader(reader) {}

  void on_process(const log::ProcessRecord& r) override;
  void on_rank(const log::RankRecord& r) override {
    if (!rank) rank = r;
  }
  void on_kernel(const log::KernelRecord& r) override;
  void on_memcpy(const log::MemcpyRecord& r) override { see(r.start_ns, r.end_ns); }
  void on_memset(const log::MemsetRecord& r) override { see(r.start_ns, r.end_ns); }
  void on_api(const log::ApiRecord& r) override;
  void on_sync(const log::SyncRecord& r) override { see(r.start_ns, r.end_ns); }
  void on_nvtx(const log::NvtxRecord& r) override { see(r.ts_ns); }
  void on_overhead(const log::OverheadRecord& r) override { see(r.start_ns, r.end_ns); }
  void on_memory(const log::MemoryRecord& r) override { see(r.ts_ns); }
  // GPU-metrics records (the launcher's sampler log) do not widen the span: the sampler
  // runs before and after the traced processes.
  void on_gpu_metrics_session(const log::GpuMetricsSessionRecord& r, std::span<const std::uint64_t>) override {
    gpu_metrics_sessions.push_back(r);
  }
  void on_gpu_metric_sample(const log::GpuMetricSampleRecord&, std::span<const double>) override {
    ++gpu_metric_samples;
  }
  void on_capture(const log::CaptureRecord& r) override;
  void on_process_end(const log::ProcessEndRecord& r) override;

  /// The process start: its ProcessRecord's, else the first timestamp, else 0.
  [[nodiscard]] std::uint64_t start_ns() const;
  /// The last timestamp, at least start_ns().
  [[nodiscard]] std::uint64_t end_ns() const;

  std::optional<log::ProcessRecord> process;  // the first ProcessRecord
  std::optional<log::RankRecord> rank;        // the first RankRecord (none from older collectors)
  bool has_end = false;                       // a ProcessEndRecord: the log was closed
  std::uint64_t kernel_records = 0;
  std::uint64_t min_ts = kOpenEnd;  // over all records; 0 timestamps (not recorded) ignored
  std::uint64_t max_ts = 0;
  std::vector<CaptureEdge> captures;  // in log order
  /// Each recorded cudaProfilerStart/cuProfilerStart call (its start) and the latest end of
  /// the API calls recorded after it until a cudaProfilerStop/cuProfilerStop call: where a
  /// window of --capture-range cudaProfilerApi lay, should its capture records be lost
  /// (the collector records API calls only inside a window). In log order.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> profiler_spans;
  std::unordered_map<std::uint32_t, ApiInfo> apis;                 // by correlation_id
  std::vector<log::GpuMetricsSessionRecord> gpu_metrics_sessions;  // in log order
  std::uint64_t gpu_metric_samples = 0;

  /// The log holds GPU-metrics records (the launcher's sampler log when it has no process).
  [[nodiscard]] bool has_gpu_metrics() const { return !gpu_metrics_sessions.empty() || gpu_metric_samples > 0; }

 private:
  void see(std::uint64_t t) {
    if (t == 0) return;  // 0 = not recorded
    if (t < min_ts) min_ts = t;
    if (t > max_ts) max_ts = t;
  }
  void see(std::uint64_t a, std::uint64_t b) {
    see(a);
    see(b);
  }
  const EventLogReader& m_reader;
  bool m_profiler_span_open = false;
};

/// The capture windows of a scanned log, in time order. No capture edge at all: one
/// window 'all' from the process start, never closed. A stop before any start opens a
/// 'process_start' window (the collector began capturing); starts inside an open window
/// and stops with no open window (after the first) are ignored. `starts_closed` (a session
/// of gpuscope launch, which records only between gpuscope start and stop): no edge means
/// no window.
[[nodiscard]] std::vector<Window> capture_windows(std::vector<CaptureEdge> edges, std::uint64_t process_start_ns,
                                                  bool starts_closed = false);

}  // namespace gpuscope::store::detail
