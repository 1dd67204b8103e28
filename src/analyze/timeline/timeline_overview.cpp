#include "analyze/timeline/timeline_overview.hpp"

#include <string>

#include "analyze/timeline/overview_builder.hpp"
#include "analyze/timeline/timeline.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::overview::build_overview;
using detail::overview::Counts;

// Rows of `table`, and the range they cover into `counts` (one scan).
std::int64_t table_rows(store::Database& db, const char* table, Counts& counts) {
  if (!db.has_table(table)) return 0;
  store::Statement st =
      db.prepare(std::string("SELECT COUNT(*), MIN(start_ns), MAX(COALESCE(end_ns, start_ns)) FROM ") + table);
  if (!st.step() || st.column_int(0) == 0) return 0;
  if (!st.is_null(1) && !st.is_null(2)) counts.cover(st.column_int(1), st.column_int(2));
  return st.column_int(0);
}

}  // namespace

core::TimelineOverview timeline_overview(const core::TimelineHeader& header, const core::TimelineTracks& tracks,
                                         core::TimelineEvents& events, const TimelineOverviewOptions& options) {
  Counts counts;
  events.kernels([&counts](const core::KernelEvent& e) {
    ++counts.gpu;
    counts.cover(e.start_ns, e.end_ns);
  });
  events.memcpys([&counts](const core::MemcpyEvent& e) {
    ++counts.gpu;
    counts.cover(e.start_ns, e.end_ns);
  });
  events.memsets([&counts](const core::MemsetEvent& e) {
    ++counts.gpu;
    counts.cover(e.start_ns, e.end_ns);
  });
  events.api_calls([&counts](const core::ApiCallEvent& e) {
    ++counts.api;
    counts.cover(e.start_ns, e.end_ns);
  });
  events.nvtx([&counts](const core::NvtxEvent& e) {
    ++counts.nvtx;
    counts.cover(e.start_ns, e.end_ns.value_or(e.start_ns));
  });
  return build_overview(header, tracks, counts, options, events);
}

core::TimelineOverview timeline_overview(store::Database& db, const TimelineOverviewOptions& options) {
  TraceTimeline timeline(db);
  const core::TimelineHeader header = timeline.header();
  const core::TimelineTracks tracks = timeline.tracks(header);
  Counts counts;
  counts.gpu =
      table_rows(db, "kernels", counts) + table_rows(db, "memcpys", counts) + table_rows(db, "memsets", counts);
  counts.api = table_rows(db, "api_calls", counts);
  counts.nvtx = table_rows(db, "nvtx_events", counts);
  // The rows are read on a second thread while this one bins and selects (the visitors never
  // use `db`); the counts above were the last query on this thread.
  timeline.set_read_ahead(true);
  return build_overview(header, tracks, counts, options, timeline);
}

}  // namespace gpuscope::analyze
