// When the collector records: the capture-window state machine.
//
// Recording = (capture range open) AND (time gate open).
//  - capture range: kNone = always open; kCudaProfilerApi / kNvtx = opened by
//    range_start() and closed by range_stop(). With CaptureEnd::kStop the first
//    close is final; with kRepeat every start/stop pair opens a window.
//  - time gate (GPUSCOPE_DELAY_NS / GPUSCOPE_DURATION_NS): opens at launch +
//    delay, closes for good at launch + delay + duration (duration 0 = never).
// Every change of "recording" is returned as an edge (state + reason string:
// "all", "delay", "duration", "cudaProfilerStart", "nvtx:NAME", ...), which the
// collector writes as a log::CaptureRecord and applies to CUPTI. Pure: no locks,
// no clock; the caller serialises calls and supplies the time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collect/collector_config.hpp"
#include "core/event_log_format.hpp"

namespace gpuscope::collect {

struct CaptureEdge {
  log::CaptureState state;
  std::string reason;
};

class CaptureController {
 public:
  /// `time_gate_open`: whether the time gate is open at collector start.
  CaptureController(CaptureRange range, CaptureEnd end, bool time_gate_open);

  /// The edge at collector start: start "all" when recording from the start.
  [[nodiscard]] std::optional<CaptureEdge> begin();

  /// cudaProfilerStart / matching NVTX range begins. Ignored for kNone, while
  /// open, or after the final window.
  [[nodiscard]] std::optional<CaptureEdge> range_start(std::string_view reason);
  /// cudaProfilerStop / the opening NVTX range ends. Ignored when not open.
  [[nodiscard]] std::optional<CaptureEdge> range_stop(std::string_view reason);

  /// The delay has passed (reason "delay"). Ignored after close_time_gate().
  [[nodiscard]] std::optional<CaptureEdge> open_time_gate();
  /// The duration has passed (reason "duration"); final.
  [[nodiscard]] std::optional<CaptureEdge> close_time_gate();

  [[nodiscard]] bool recording() const { return m_range_open && m_time_open; }
  /// The capture range is open (recording if the time gate is open too).
  [[nodiscard]] bool range_open() const { return m_range_open; }
  /// Nothing will be recorded any more.
  [[nodiscard]] bool finished() const { return m_time_done || m_range_done; }
  [[nodiscard]] bool time_gate_opened() const { return m_time_open || m_time_done; }
  [[nodiscard]] bool time_gate_closed() const { return m_time_done; }

 private:
  std::optional<CaptureEdge> edge_if_changed(bool was_recording, std::string_view reason) const;

  CaptureRange m_range;
  CaptureEnd m_end;
  bool m_range_open;
  bool m_range_done = false;
  bool m_time_open;
  bool m_time_done = false;
};

/// How long after a session's stop (gpuscope stop) the collector waits before it acknowledges:
/// kernels launched inside the window complete and are delivered meanwhile. max(500 ms, two
/// flush periods), in ns.
[[nodiscard]] std::uint64_t session_stop_grace_ns(std::uint32_t flush_period_ms);

/// The capture windows so far, as their edges were applied, for dropping GPU records no window
/// can claim before they reach the log (session mode, where kernel records stay on between
/// windows once the first one opened them). A record is kept when it has no timestamp (0: the
/// importer decides by its launch call), or when it starts at or after a window's start and
/// before that window's stop + `slack_ns` (a kernel launched inside a window may start after
/// it closed; the importer then keeps it by its launch call and clips everything else). Pure;
/// one writer and reader at a time (the caller serialises).
class WindowSpans {
 public:
  explicit WindowSpans(std::uint64_t slack_ns) : m_slack_ns(slack_ns) {}
  /// A window opens at `ts_ns` (ignored while one is open).
  void open(std::uint64_t ts_ns);
  /// The open window closes at `ts_ns` (ignored while none is open).
  void close(std::uint64_t ts_ns);
  [[nodiscard]] bool keeps(std::uint64_t start_ns) const;
  [[nodiscard]] std::size_t windows() const { return m_spans.size(); }

 private:
  struct Span {
    std::uint64_t start = 0;
    std::uint64_t stop = 0;
    bool closed = false;
  };
  std::uint64_t m_slack_ns;
  std::vector<Span> m_spans;  // in time order, not overlapping
};

/// Time gate on the CUPTI clock. open_at_ns 0 = open from the start;
/// close_at_ns 0 = never closes.
struct TimeGate {
  std::uint64_t open_at_ns = 0;
  std::uint64_t close_at_ns = 0;
};

/// Converts the launcher's CLOCK_REALTIME origin to the CUPTI clock:
/// cupti = realtime + realtime_to_cupti_ns (measured once at init). A missing
/// origin (0) means "collector start" (init_cupti_ns).
[[nodiscard]] TimeGate compute_time_gate(std::uint64_t launch_realtime_ns, std::uint64_t delay_ns,
                                         std::uint64_t duration_ns, std::int64_t realtime_to_cupti_ns,
                                         std::uint64_t init_cupti_ns);

/// True when the gate is open at `now_ns` (after open, before close).
[[nodiscard]] bool time_gate_open_at(const TimeGate& gate, std::uint64_t now_ns);

/// ns from `now_ns` to the next gate edge not yet applied (UINT64_MAX = none).
[[nodiscard]] std::uint64_t ns_to_next_gate_edge(const TimeGate& gate, std::uint64_t now_ns, bool opened, bool closed);

/// One CUPTI switch the collector makes when recording starts or stops (Collector::apply_recording).
enum class RecordingSwitch : std::uint8_t {
  kKernelKinds,      // CONCURRENT_KERNEL and the other GPU activity kinds on (sessions: once, for good)
  kGatedKinds,       // the kinds that follow the windows (API activity records with --cuda-api=all)
  kLaunchCallbacks,  // gpuscope's own launch-call callbacks (sessions)
};

/// The switches to make, in order, to follow `want` (recording or not). A session turns the kernel
/// records on at its first window, before anything that records a launch call: a launch in flight
/// between the two would otherwise have its call recorded in the window and no kernel (seen on an
/// H100: window 1 held one launch call more than kernels). kernel_records_on: already on.
[[nodiscard]] std::vector<RecordingSwitch> recording_switches(bool session, bool want, bool kernel_records_on,
                                                              bool api_callbacks);

}  // namespace gpuscope::collect
