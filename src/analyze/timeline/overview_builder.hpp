// The timeline overview built from its events (timeline_overview.hpp says what it holds):
// lanes with their busy density, and the items the selection (overview_selection.hpp) kept.
// build_overview visits `events` once per kind (GPU work, then API calls, then NVTX), given
// the counts and range a first pass or SQL found. Internal to analyze/timeline.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "analyze/timeline/timeline_overview.hpp"
#include "core/timeline.hpp"
#include "core/timeline_overview.hpp"

namespace gpuscope::analyze::detail::overview {

/// Events per side, for sharing the item cap, and the range they cover (absolute ns).
struct Counts {
  std::int64_t gpu = 0;
  std::int64_t api = 0;
  std::int64_t nvtx = 0;
  std::int64_t first = std::numeric_limits<std::int64_t>::max();  // earliest start
  std::int64_t last = std::numeric_limits<std::int64_t>::min();   // latest end (or start)
  void cover(std::int64_t start, std::int64_t end) {
    first = std::min(first, start);
    last = std::max({last, start, end});
  }
  [[nodiscard]] std::int64_t total() const { return gpu + api + nvtx; }
};

[[nodiscard]] core::TimelineOverview build_overview(const core::TimelineHeader& header,
                                                    const core::TimelineTracks& tracks, const Counts& counts,
                                                    const TimelineOverviewOptions& options,
                                                    core::TimelineEvents& events);

}  // namespace gpuscope::analyze::detail::overview
