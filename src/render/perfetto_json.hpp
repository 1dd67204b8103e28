// Writes a timeline (core/timeline.hpp) as Chrome trace-event JSON, the format
// ui.perfetto.dev and chrome://tracing open, following the PyTorch profiler's
// (Kineto's libkineto/src/output_json.cpp) conventions so tools made for
// PyTorch traces (HTA, TensorBoard's profiler plugin) read ours.
//
// Shape:
//   {"schemaVersion": 1, "deviceProperties": [...], "displayTimeUnit": "ms",
//    "baseTimeNanoseconds": BASE, "traceEvents": [...]}
//   BASE = Timeline::base_ns. Every "ts" and "dur" is in µs relative to BASE,
//   written from integer ns with exactly 3 decimals ("1234.567"), so no ns is lost.
//
// Events ("ph":"X" unless said):
//   CPU (pid = OS pid, tid = OS tid):
//     cat "cuda_runtime" / "cuda_driver"  API calls; args cbid, correlation
//     cat "user_annotation"               NVTX ranges (an unclosed range runs to its
//                                         process's end, args "unclosed": true);
//                                         NVTX marks as "ph":"i", "s":"t"
//     cat "cuda_sync"                     CPU waits; tid = the waiting thread, or the
//                                         pid (main thread) when unknown
//   GPU (pid = GPU index, tid = stream id, as Kineto):
//     cat "kernel"     args queued (0: not recorded), device, context, stream,
//                      correlation, registers per thread, shared memory (static +
//                      dynamic, bytes), blocks per SM, warps per SM (when the SM
//                      count is known), grid [x,y,z], block [x,y,z]
//     cat "gpu_memcpy" name "Memcpy HtoD (Pageable -> Device)"; args device,
//                      context, stream, correlation, bytes, memory bandwidth (GB/s)
//     cat "gpu_memset" name "Memset (Device)"; same args
//   Counters ("ph":"C", pid = GPU index, tid 0, cat "gpu_memory"): "memory in use
//     (device N)", args {"bytes": B}: the device memory in use on GPU N (all its processes)
//     just after each allocation or free (trace --cuda-memory-usage; core/memory_usage.hpp).
//     cat "gpu_metrics": one track per sampled metric and GPU (trace --gpu-metrics), named
//     "LABEL UNIT (device N)" ("SM active % (device 0)", "DRAM read GB/s (device 0)",
//     "SM clock MHz (device 0)"), args {"value": V}: a point at a sample's start with its
//     value over the sample (percent as is, bytes moved as GB/s, Hz as MHz:
//     core::counter_value) where the value changes. Only when `events` is also a
//     core::GpuMetricCounterSource (analyze::TraceTimeline is); a sample without a value
//     (NULL) gets no point, so the track holds the previous value across it and any gap.
//   Flows: "ph":"s" on the launching API call and "ph":"f" ("bp":"e") on each GPU
//     activity it launched, "cat":"ac2g", "name":"ac2g", "id" = correlation id.
//     Collectives, "cat":"nccl", "name":"nccl": the k-th NCCL kernel of every lane (a process
//     on a GPU; TimelineTracks::nccl_lanes) is one collective instance; its kernels are
//     chained in the order they start, "s" on one and "f" on the next, so the last arrow
//     ends on the rank that started last. id = 2^52 + k * 2^16 + position in the chain.
//   NCCL kernels (core::parse_nccl_kernel) go on a lane of their own per process and GPU:
//     on the GPU's row, tid 999999 ("NCCL"; (P + 1) * 1000000 + 999999, "NCCL (pid N)" when
//     several processes share the GPU), or in the rank's group (below).
//   Ranks: when some process has a rank (processes.rank), each such process is one
//     process group (pid = OS pid), "rank N (host, GPU i)", sorted by rank, its command in
//     process_labels; it holds its CPU threads and, as threads numbered from 4000000000,
//     its GPU work: "GPU i stream S" per stream and "GPU i NCCL" per GPU. GPU rows then hold
//     only processes without a rank and the counters. Processes without a rank sort after
//     the ranks (500000 + index).
//   Requests (cat "request"; only when `events` is also a core::RequestSpanSource, as
//     analyze::TraceTimeline is, and the trace's requests table has rows: `gpuscope bench
//     serve --session`): process group pid 2000000000, "requests (gpuscope bench serve)",
//     sort index -1 (first); each request a slice named by its X-Request-Id on lane tid
//     1, 2, ... ("requests, lane N": the first lane free at its start, so overlapping
//     requests take separate lanes), args request, ttft_ms, prompt_tokens, output_tokens,
//     warmup (when true), new_connection, error (when it failed); its first token an instant
//     "first token" on the same lane.
//   Python samples (trace --python-sampling; only when a core::PythonSampleSource is given):
//     "ph":"i", "s":"t", cat "python_sample" on the sampled OS thread's row (pid, tid), named
//     by the innermost frame "function (file.py:LINE)" ("(no Python frame)" when the thread
//     had none), args "Python stack" (the frames innermost first, joined by " ← "), "state"
//     ("on CPU, GIL held"), "holds GIL" and "on CPU" (booleans). Perfetto's JSON importer
//     reads no "stackFrames"/"samples" dictionaries, so the stacks are args, not a flame graph
//     (the pftrace export has one: render/perfetto_proto.hpp).
//   Metadata ("ph":"M"): process_name ("python3 (pid 1234)", "GPU 0"), process_labels
//     (GPU name), process_sort_index (CPU processes first, then GPUs), thread_name
//     ("stream 7"; CPU threads by nvtxNameOsThread name or "thread TID"),
//     thread_sort_index.
//
// Several processes on one GPU: CUPTI stream ids are per process, so two
// processes can both have "stream 7". Only then, the GPU tid becomes
// (P + 1) * 1000000 + stream_id, P = the process's index in pid order (thread
// name "stream 7 (pid 1234)"); and flow ids become ((P + 1) << 32) + correlation
// id, since correlation ids are per process too. Both stay below 2^53 (exact in
// JavaScript) and tids below 2^32 (Perfetto's limit).
//
// The layout below (rows, names, flows, counters) is render/timeline_layout.hpp's, which
// render/perfetto_proto.hpp (Perfetto's protobuf trace) shares.
//
// Streaming: events are written as the source visits them (API calls, then NVTX, syncs,
// kernels, memcpys, memsets, memory counters, metric counters, requests, Python samples,
// each in the source's order); the writer keeps state per process, thread, stream and
// device only, so memory does not grow with the number of events. Flows come from the
// events' launch flags (ApiCallEvent::launched_traced_gpu_work, GpuEventBase::launch_traced).
//
// Errors: those of the stream (check out.fail() after the call) and of the source
// (store::DatabaseError from analyze::TraceTimeline); std::logic_error if an event's pid
// is missing from tracks.pids (a source that contradicts itself).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/python_samples.hpp"
#include "core/timeline.hpp"

namespace gpuscope::render {

/// Writes the trace as `events` visits it; see the file comment. `header` and `tracks`
/// describe the same trace (analyze::TraceTimeline::header() and tracks()).
/// `python`: the Python stack samples (nullptr: those of `events` if it is a
/// PythonSampleSource, else none).
void write_perfetto_json(const TimelineHeader& header, const TimelineTracks& tracks, TimelineEvents& events,
                         std::ostream& out, PythonSampleSource* python = nullptr);

/// Writes an in-memory Timeline (tracks from timeline_tracks(); the launch flags as the
/// events hold them: analyze::load_timeline sets them, link_launches() for one built by hand).
void write_perfetto_json(const Timeline& timeline, std::ostream& out);

/// ns → µs text with exactly 3 decimals: 1234567 → "1234.567", -5 → "-0.005".
[[nodiscard]] std::string format_us(std::int64_t ns);

}  // namespace gpuscope::render
