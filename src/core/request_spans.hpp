// Requests a load generator sent to a traced server (`gpuscope bench serve --session`, the
// trace's requests table: docs/trace-schema.md), as spans of the timeline: what the Perfetto
// export draws on its "requests" track (render/timeline_layout.hpp), so a slow request sits
// above the kernels that ran during it.
//
// A source that has them implements RequestSpanSource beside core::TimelineEvents
// (analyze::TraceTimeline does), and the export asks for it, as for GpuMetricCounterSource.
// Times: ns on the trace clock (CLOCK_REALTIME). Errors: whatever the source throws.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace gpuscope::core {

/// One request, client side.
struct RequestSpanEvent {
  std::string_view request;                    // its X-Request-Id ("gpuscope-PID-N")
  std::int64_t start_ns = 0;                   // sent
  std::optional<std::int64_t> first_token_ns;  // first token received; nullopt: none
  std::int64_t end_ns = 0;                     // response ended (or failed)
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  bool warmup = false;
  bool new_connection = false;  // it opened a TCP connection
  std::string_view error;       // "" = succeeded
};

/// A source of request spans, visited in start order (ties: the source's row order).
class RequestSpanSource {
 public:
  virtual ~RequestSpanSource() = default;
  virtual void request_spans(const std::function<void(const RequestSpanEvent&)>& visit) = 0;
};

}  // namespace gpuscope::core

namespace gpuscope {
using core::RequestSpanEvent;
using core::RequestSpanSource;
}  // namespace gpuscope
