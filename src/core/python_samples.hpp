// Periodic samples of the Python threads' stacks (gpuscope trace --python-sampling: the
// trace's py_samples, py_stacks and py_frames tables, docs/trace-schema.md), as the timeline
// export draws them on each thread's track (render/timeline_layout.hpp): the Perfetto JSON
// as instant events, the protobuf trace as Perfetto's own CPU-profile samples (a flame graph
// for a selection).
//
// A source that has them implements PythonSampleSource; the export is handed it beside its
// core::TimelineEvents. Times: ns on the trace clock (CLOCK_REALTIME). Errors: whatever the
// source throws.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace gpuscope::core {

/// One frame of a sampled stack: co_qualname, co_filename as recorded, line (-1: unknown).
struct PythonFrame {
  std::string_view function;
  std::string_view file;
  std::int64_t line = -1;
};

/// One sample of one thread.
struct PythonSampleEvent {
  std::int64_t pid = 0;
  std::int64_t tid = 0;  // OS thread id
  std::int64_t ts_ns = 0;
  /// py_stacks.id of the innermost frame: equal ids, equal stacks; 0 = no Python frame.
  std::int64_t stack_id = 0;
  std::span<const PythonFrame> frames;  // outermost first; empty when stack_id is 0
  bool holds_gil = false;
  bool on_cpu = false;
};

/// A source of Python samples, visited in time order (ties: the source's row order).
class PythonSampleSource {
 public:
  virtual ~PythonSampleSource() = default;
  virtual void python_samples(const std::function<void(const PythonSampleEvent&)>& visit) = 0;
};

/// A frame as the export names it: "function (file.py:LINE)", the file's last path
/// component; "?" for an unknown function, file or line.
[[nodiscard]] std::string python_frame_name(const PythonFrame& frame);

/// The sample's thread state as the export writes it: "on CPU, GIL held", "off CPU, no GIL"...
[[nodiscard]] std::string python_sample_state(const PythonSampleEvent& sample);

}  // namespace gpuscope::core

namespace gpuscope {
using core::PythonFrame;
using core::PythonSampleEvent;
using core::PythonSampleSource;
}  // namespace gpuscope
