// analyze/timeline: reads a trace database as a timeline (core/timeline.hpp).
//
// TraceTimeline streams: header() and tracks() hold what an exporter needs before the
// first event (memory grows with processes, threads and streams only), then each event
// kind is read row by row in time order (ORDER BY start_ns, id, on the start_ns indexes), one
// row (or, with read-ahead, a bounded batch) in memory at a time, launch flags computed by
// SQL on the schema's (pid, correlation_id) indexes.
// load_timeline() reads the same into vectors (tests, small traces).
//
// Errors: store::DatabaseError when the database lacks the schema's tables or a read
// fails (store::TraceDamagedError for a damaged file).
#pragma once

#include "analyze/common/gpu_index.hpp"
#include "core/metric_attribution.hpp"
#include "core/request_spans.hpp"
#include "core/timeline.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

using gpuscope::ApiCallEvent;
using gpuscope::GpuEventBase;
using gpuscope::KernelEvent;
using gpuscope::MemcpyEvent;
using gpuscope::MemoryCounterEvent;
using gpuscope::MemsetEvent;
using gpuscope::NvtxEvent;
using gpuscope::SyncEvent;
using gpuscope::Timeline;
using gpuscope::TimelineDevice;
using gpuscope::TimelineEvents;
using gpuscope::TimelineHeader;
using gpuscope::TimelineProcess;
using gpuscope::TimelineThread;
using gpuscope::TimelineTracks;

/// The timeline of one trace database, read as it is visited. `db` must outlive it.
/// Also a GpuMetricCounterSource (core/metric_attribution.hpp): the sampled GPU metrics, and
/// a RequestSpanSource (core/request_spans.hpp): the requests table.
class TraceTimeline final : public TimelineEvents, public GpuMetricCounterSource, public RequestSpanSource {
 public:
  /// Reads the physical GPU numbering (analyze/common/gpu_index.hpp).
  explicit TraceTimeline(store::Database& db);

  /// Read-ahead (off unless set): the event visitors read their rows on a second thread, a
  /// batch of a few thousand events ahead of the visitor, so reading and what the visitor
  /// does (an exporter's encoding and writing) overlap on two cores. The visitor is still
  /// called on the caller's thread, one event at a time, in the same order; memory stays
  /// bounded (two batches wait at most). While a visit runs with read-ahead, the visitor
  /// must not use `db` (the reading thread is using the connection).
  void set_read_ahead(bool on) { m_read_ahead = on; }

  /// Processes, threads, devices and base_ns (the earliest start of any kind).
  [[nodiscard]] TimelineHeader header();
  /// Tracks and end of the trace: one DISTINCT pass over each event table.
  [[nodiscard]] TimelineTracks tracks(const TimelineHeader& header);

  void api_calls(const Visitor<ApiCallEvent>& visit) override;
  void nvtx(const Visitor<NvtxEvent>& visit) override;
  void syncs(const Visitor<SyncEvent>& visit) override;
  void kernels(const Visitor<KernelEvent>& visit) override;
  void memcpys(const Visitor<MemcpyEvent>& visit) override;
  void memsets(const Visitor<MemsetEvent>& visit) override;
  /// memory_events' levels summed per physical GPU (a trace without the table: none).
  void memory(const Visitor<MemoryCounterEvent>& visit) override;
  /// gpu_metrics (trace --gpu-metrics) per GPU and metric, in start order, as counter_value()
  /// converts them: a point at each sample whose value differs from the track's last point
  /// (a counter holds its value; NULL values skipped); tracks "LABEL UNIT (device N)" ("SM
  /// active % (device 0)", "DRAM read GB/s (device 0)", "SM clock MHz (device 0)"). A trace
  /// without the tables: none.
  void gpu_metric_counters(const std::function<void(const GpuMetricCounterEvent&)>& visit) override;
  /// The requests table (bench serve --session) in start order; a trace without it: none.
  void request_spans(const std::function<void(const RequestSpanEvent&)>& visit) override;

 private:
  store::Database& m_db;
  detail::GpuIndexMap m_gpus;
  bool m_read_ahead = false;
};

/// The whole trace in memory (TraceTimeline's events in vectors, launch flags set).
/// Memory grows with the number of events: export streams instead.
[[nodiscard]] Timeline load_timeline(store::Database& db);

}  // namespace gpuscope::analyze
