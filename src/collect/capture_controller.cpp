#include "collect/capture_controller.hpp"

#include <algorithm>
#include <limits>

namespace gpuscope::collect {

CaptureController::CaptureController(CaptureRange range, CaptureEnd end, bool time_gate_open)
    : m_range(range), m_end(end), m_range_open(range == CaptureRange::kNone), m_time_open(time_gate_open) {}

std::optional<CaptureEdge> CaptureController::edge_if_changed(bool was_recording, std::string_view reason) const {
  if (was_recording == recording()) return std::nullopt;
  return CaptureEdge{recording() ? log::CaptureState::kStart : log::CaptureState::kStop, std::string(reason)};
}

std::optional<CaptureEdge> CaptureController::begin() {
  if (!recording()) return std::nullopt;
  return CaptureEdge{log::CaptureState::kStart, "all"};
}

std::optional<CaptureEdge> CaptureController::range_start(std::string_view reason) {
  if (m_range == CaptureRange::kNone || m_range_open || m_range_done) return std::nullopt;
  const bool was = recording();
  m_range_open = true;
  return edge_if_changed(was, reason);
}

std::optional<CaptureEdge> CaptureController::range_stop(std::string_view reason) {
  if (m_range == CaptureRange::kNone || !m_range_open) return std::nullopt;
  const bool was = recording();
  m_range_open = false;
  if (m_end == CaptureEnd::kStop) m_range_done = true;
  return edge_if_changed(was, reason);
}

std::optional<CaptureEdge> CaptureController::open_time_gate() {
  if (m_time_open || m_time_done) return std::nullopt;
  const bool was = recording();
  m_time_open = true;
  return edge_if_changed(was, "delay");
}

std::optional<CaptureEdge> CaptureController::close_time_gate() {
  if (m_time_done) return std::nullopt;
  const bool was = recording();
  m_time_open = false;
  m_time_done = true;
  return edge_if_changed(was, "duration");
}

std::uint64_t session_stop_grace_ns(std::uint32_t flush_period_ms) {
  return std::max<std::uint64_t>(500'000'000ull, 2ull * flush_period_ms * 1'000'000ull);
}

void WindowSpans::open(std::uint64_t ts_ns) {
  if (!m_spans.empty() && !m_spans.back().closed) return;
  m_spans.push_back({ts_ns, 0, false});
}

void WindowSpans::close(std::uint64_t ts_ns) {
  if (m_spans.empty() || m_spans.back().closed) return;
  m_spans.back().stop = std::max(ts_ns, m_spans.back().start);
  m_spans.back().closed = true;
}

bool WindowSpans::keeps(std::uint64_t start_ns) const {
  if (start_ns == 0) return true;
  // The latest window that opened at or before the record's start is the only one that can
  // claim it (records mostly arrive in time order: this is the last span).
  for (auto it = m_spans.rbegin(); it != m_spans.rend(); ++it) {
    if (start_ns < it->start) continue;
    return !it->closed || start_ns < it->stop || start_ns - it->stop < m_slack_ns;
  }
  return false;
}

TimeGate compute_time_gate(std::uint64_t launch_realtime_ns, std::uint64_t delay_ns, std::uint64_t duration_ns,
                           std::int64_t realtime_to_cupti_ns, std::uint64_t init_cupti_ns) {
  TimeGate g;
  if (delay_ns == 0 && duration_ns == 0) return g;
  std::uint64_t origin = init_cupti_ns;
  if (launch_realtime_ns != 0) {
    const std::int64_t o = static_cast<std::int64_t>(launch_realtime_ns) + realtime_to_cupti_ns;
    origin = o > 0 ? static_cast<std::uint64_t>(o) : 0;
  }
  g.open_at_ns = delay_ns == 0 ? 0 : origin + delay_ns;
  if (duration_ns != 0) g.close_at_ns = origin + delay_ns + duration_ns;
  return g;
}

bool time_gate_open_at(const TimeGate& gate, std::uint64_t now_ns) {
  if (now_ns < gate.open_at_ns) return false;
  return gate.close_at_ns == 0 || now_ns < gate.close_at_ns;
}

std::uint64_t ns_to_next_gate_edge(const TimeGate& gate, std::uint64_t now_ns, bool opened, bool closed) {
  constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  if (closed) return kNever;
  if (!opened) return gate.open_at_ns > now_ns ? gate.open_at_ns - now_ns : 0;
  if (gate.close_at_ns == 0) return kNever;
  return gate.close_at_ns > now_ns ? gate.close_at_ns - now_ns : 0;
}

std::vector<RecordingSwitch> recording_switches(bool session, bool want, bool kernel_records_on, bool api_callbacks) {
  std::vector<RecordingSwitch> out;
  if (session && want && !kernel_records_on) out.push_back(RecordingSwitch::kKernelKinds);
  out.push_back(RecordingSwitch::kGatedKinds);
  if (session && api_callbacks) out.push_back(RecordingSwitch::kLaunchCallbacks);
  return out;
}

}  // namespace gpuscope::collect
