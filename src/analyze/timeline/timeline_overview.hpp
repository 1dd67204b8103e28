// analyze/timeline_overview: a trace database → core::TimelineOverview (core/
// timeline_overview.hpp), the timeline gpuscope report's page draws.
//
// Reads the trace once through analyze::TraceTimeline (GPU kinds first: kernels, memcpys,
// memsets; then API calls and NVTX; syncs and counters are not drawn). Memory grows with
// lanes × bins and with the item cap, never with the number of events.
//
// Lanes: per process (tracks' pid order) a "CUDA API" and an "NVTX" lane per thread that has
// such events (main thread first, then by tid); per physical GPU its streams (several
// processes on one GPU: one lane per (pid, stream), labelled with the pid). Labels are those
// of `gpuscope export` (core/timeline_labels.hpp).
//
// Items: every event when the trace has at most options.item_cap of them (selection "all").
// Otherwise (selection "longest and spread") at most item_cap: the cap is shared between
// GPU work, API calls and NVTX ranges in proportion to their counts (NVTX ranges, few and
// long, at least a fifth of the cap when they have that many); within each side half goes
// to a spread across time (each lane's span cut into equal slots, the longest event starting
// in each slot kept; more slots than that half: an even subset), the rest to the longest
// events; on the API side the calls that launched an included kernel, memcpy or memset come
// first, so hovering GPU work can name its launch. The density always counts every event.
// The drawn range is the first drawn event's start to the last one's end (the capture, not
// the process's life); unclosed NVTX ranges end at their process's end, else at the trace's
// end (as export), cut at the drawn range's end.
//
// Errors: those of TraceTimeline (store::DatabaseError).
#pragma once

#include <cstdint>

#include "core/timeline.hpp"
#include "core/timeline_overview.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

struct TimelineOverviewOptions {
  /// The most individual events included (the page's size budget: ≈ 13 bytes each encoded).
  std::int64_t item_cap = 150'000;
  /// Density bins per lane, at most: fewer when lanes × bins would exceed density_budget.
  std::int32_t max_bins = 16'384;
  /// The most density bytes over all lanes (lanes × bins); bins never go below 256.
  std::int64_t density_budget = 2'000'000;
};

/// The overview of the trace in `db` (its event counts from SQL, then one pass per kind).
[[nodiscard]] core::TimelineOverview timeline_overview(store::Database& db,
                                                       const TimelineOverviewOptions& options = {});

/// The same from any event source (an in-memory core::Timeline through TimelineVectors, in
/// tests): `events` is visited once to count, then once to build.
[[nodiscard]] core::TimelineOverview timeline_overview(const core::TimelineHeader& header,
                                                       const core::TimelineTracks& tracks, core::TimelineEvents& events,
                                                       const TimelineOverviewOptions& options = {});

}  // namespace gpuscope::analyze
