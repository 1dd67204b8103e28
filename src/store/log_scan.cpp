#include "store/log_scan.hpp"

#include <algorithm>

namespace gpuscope::store::detail {

void LogScan::on_process(const log::ProcessRecord& r) {
  if (!process) process = r;
  see(r.start_ns);
}

void LogScan::on_kernel(const log::KernelRecord& r) {
  ++kernel_records;
  see(r.start_ns, r.end_ns);
}

void LogScan::on_api(const log::ApiRecord& r) {
  apis[r.correlation_id] = {r.start_ns, r.thread_id};
  see(r.start_ns, r.end_ns);
  const std::string_view name = m_reader.string(r.name_string);
  if (name.starts_with("cudaProfilerStart") || name.starts_with("cuProfilerStart")) {
    if (!m_profiler_span_open) profiler_spans.emplace_back(r.start_ns, std::max(r.start_ns, r.end_ns));
    m_profiler_span_open = true;  // a nested cuProfilerStart is part of the same call
  } else if (name.starts_with("cudaProfilerStop") || name.starts_with("cuProfilerStop")) {
    if (m_profiler_span_open) profiler_spans.back().second = std::max(profiler_spans.back().second, r.start_ns);
    m_profiler_span_open = false;
  } else if (m_profiler_span_open && r.start_ns >= profiler_spans.back().first) {
    profiler_spans.back().second = std::max(profiler_spans.back().second, r.end_ns);
  }
}

void LogScan::on_capture(const log::CaptureRecord& r) {
  captures.push_back({r.ts_ns, r.state == static_cast<std::uint8_t>(log::CaptureState::kStart),
                      std::string(m_reader.string(r.reason_string))});
  see(r.ts_ns);
}

void LogScan::on_process_end(const log::ProcessEndRecord& r) {
  has_end = true;
  see(r.ts_ns);
}

std::uint64_t LogScan::start_ns() const {
  const std::uint64_t first = min_ts == kOpenEnd ? 0 : min_ts;
  return process && process->start_ns != 0 ? process->start_ns : first;
}

std::uint64_t LogScan::end_ns() const { return std::max(max_ts, start_ns()); }

std::vector<Window> capture_windows(std::vector<CaptureEdge> edges, std::uint64_t process_start_ns,
                                    bool starts_closed) {
  std::stable_sort(edges.begin(), edges.end(), [](const CaptureEdge& a, const CaptureEdge& b) { return a.ts < b.ts; });
  std::vector<Window> windows;
  std::optional<Window> open;
  for (CaptureEdge& e : edges) {
    if (e.start) {
      if (!open) open = Window{e.ts, kOpenEnd, e.reason.empty() ? "start" : std::move(e.reason)};
    } else if (open) {
      open->end = e.ts;
      windows.push_back(std::move(*open));
      open.reset();
    } else if (windows.empty()) {
      // Capturing from the start, then stopped: the collector began "on".
      windows.push_back({process_start_ns, e.ts, "process_start"});
    }
  }
  if (open) windows.push_back(std::move(*open));
  if (edges.empty() && !starts_closed) windows.push_back({process_start_ns, kOpenEnd, "all"});
  return windows;
}

}  // namespace gpuscope::store::detail
