// Writes a timeline (core/timeline.hpp) as Perfetto's native protobuf trace (.pftrace),
// which ui.perfetto.dev and trace_processor open: smaller than the Chrome JSON of
// render/perfetto_json.hpp and faster to load, for traces of millions of events.
//
// Same tracks, names, flows and counters as the JSON (render/timeline_layout.hpp lays both
// out): every event on the process group and row perfetto_json.hpp describes.
//
// Shape: a Trace (render/perfetto_trace.proto, Perfetto's field numbers) whose packets all
// sit on one packet sequence (trusted_packet_sequence_id 1; the first packet clears its
// incremental state):
//   - a TrackDescriptor per row when first named or used: an OS process (pid in the trace)
//     as a ProcessDescriptor, its threads as ThreadDescriptors; a GPU's group, a rank's GPU
//     lanes and any tid beyond int32 as named tracks under their group (parent_uuid);
//     a counter track (CounterDescriptor) per counter name and group;
//   - a slice as TYPE_SLICE_BEGIN at its start and TYPE_SLICE_END at its end; an NVTX mark as
//     TYPE_INSTANT; a counter point as TYPE_COUNTER (counter_value for memory in use in
//     bytes, double_counter_value for sampled GPU metrics);
//   - event names and categories interned (InternedData event_names / event_categories,
//     sent in the packet that first uses them): a kernel name is written once;
//   - flows: a flow start ('s') in the slice's flow_ids; a launch's GPU activity carries
//     the same id in flow_ids (a graph launch's kernels chain from the launch), a
//     collective's chain ends in terminating_flow_ids.
//   - Python stack samples (trace --python-sampling), Perfetto's CPU-profile model: a
//     PerfSample packet per sample (pid, tid, callstack_iid; the packet's timestamp), the
//     stacks interned (InternedData callstacks, root frame first; frames named "function
//     (file.py:LINE)" with function_names, source_paths and line_number, all in one mapping
//     "python"), each stack ending in a frame for the thread's state ("[on CPU, GIL held]",
//     "[off CPU, no GIL]"...). The UI draws them on the thread's track; selecting a stretch
//     of it shows their flame graph.
//   Timestamps are absolute ns on the trace clock (CLOCK_REALTIME), as the trace stores them.
//   Event arguments (grid, bytes, correlation ...) are not written: the JSON has them.
//
// Streaming: each TracePacket is written length-delimited as Trace field 1 as its event
// arrives; no Trace message is built. Memory holds the layout's per-track state, the
// interned names (one entry per distinct name) and Python frames and callstacks (one per
// distinct frame, and per distinct stack and thread state), never the events.
//
// Errors: those of the stream (check out.fail() after the call) and of the source.
#pragma once

#include <ostream>

#include "core/python_samples.hpp"
#include "core/timeline.hpp"

namespace gpuscope::render {

/// Writes the trace as `events` visits it; see the file comment. `header` and `tracks`
/// describe the same trace (analyze::TraceTimeline::header() and tracks()).
/// `python`: the Python stack samples (nullptr: those of `events` if it is a
/// PythonSampleSource, else none).
void write_perfetto_proto(const TimelineHeader& header, const TimelineTracks& tracks, TimelineEvents& events,
                          std::ostream& out, PythonSampleSource* python = nullptr);

/// Writes an in-memory Timeline (as write_perfetto_json's overload).
void write_perfetto_proto(const Timeline& timeline, std::ostream& out);

}  // namespace gpuscope::render
