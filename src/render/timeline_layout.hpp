// The track layout both timeline writers share (render/perfetto_json.hpp: Chrome JSON;
// render/perfetto_proto.hpp: Perfetto's protobuf trace): which process group and row
// (pid, tid) every event goes on, the names of processes, threads, GPU streams, NCCL lanes
// and rank groups, the flows (launch → GPU activity, NCCL collectives chained across ranks)
// and the counters (memory in use, sampled GPU metrics). perfetto_json.hpp's file comment
// describes the layout; a TimelineSink turns it into one format's bytes.
//
// The layout is Chrome trace-event shaped: a metadata record per process and thread name
// and sort index ("process_name", "thread_name", ...), complete slices with their
// arguments, flow steps ('s' on the source, 'f' on each end, after the slice they bind
// to), instants and counter points. Times are integer ns on the trace clock; a sink makes
// them relative to TimelineHeader::base_ns if its format wants that.
//
// Python stack samples (core/python_samples.hpp) go to the sink as they are, on their OS
// thread's row (pid, tid): each format has its own way to draw a sampled stack.
//
// Streaming: write_timeline visits the events once in the source's order (API calls, NVTX,
// syncs, kernels, memcpys, memsets, memory counters, metric counters, requests, Python samples) and keeps state per
// process, thread, stream and device only. Errors: those of the sink and the source;
// std::logic_error if an event's pid is missing from tracks.pids.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/python_samples.hpp"
#include "core/timeline.hpp"

namespace gpuscope::render {

/// Receives the layout's records in the order the trace is visited.
class TimelineSink {
 public:
  using Json = nlohmann::ordered_json;
  virtual ~TimelineSink() = default;
  /// False when the sink drops event arguments: the layout then does not build them.
  [[nodiscard]] virtual bool wants_args() const { return true; }
  virtual void begin() {}
  virtual void end() {}
  /// "process_name" / "process_labels" / "process_sort_index" (tid 0), "thread_name" /
  /// "thread_sort_index"; args {"name": ...}, {"labels": ...} or {"sort_index": N}.
  virtual void meta(std::string_view name, std::int64_t pid, std::int64_t tid, const Json& args) = 0;
  /// A slice [start_ns, end_ns] on row (pid, tid).
  virtual void complete(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid,
                        std::int64_t start_ns, std::int64_t end_ns, const Json& args) = 0;
  /// A point event (an NVTX mark) on row (pid, tid).
  virtual void instant(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid,
                       std::int64_t at_ns, const Json& args) = 0;
  /// A flow step, phase 's' (start) or 'f' (end), bound to the slice just completed on
  /// (pid, tid) at at_ns; cat "ac2g" (launch → GPU) or "nccl" (a collective's chain).
  virtual void flow(char phase, std::int64_t id, std::int64_t pid, std::int64_t tid, std::int64_t at_ns,
                    std::string_view cat) = 0;
  /// A point of counter track `name` in process group `pid`: {arg_key: value}.
  virtual void counter(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t at_ns,
                       std::string_view arg_key, const Json& value) = 0;
  /// A Python stack sample of OS thread (sample.pid, sample.tid); the frames outermost first.
  virtual void python_sample(const PythonSampleEvent& sample) = 0;
};

/// Lays the trace out as `events` visits it, into `sink`. `header` and `tracks` describe
/// the same trace (analyze::TraceTimeline::header() and tracks()). Python samples come last,
/// from `python` or, when it is null, from `events` if it is also a PythonSampleSource.
void write_timeline(const TimelineHeader& header, const TimelineTracks& tracks, TimelineEvents& events,
                    TimelineSink& sink, PythonSampleSource* python = nullptr);

}  // namespace gpuscope::render
