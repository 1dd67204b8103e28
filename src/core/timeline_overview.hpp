// TimelineOverview: the timeline of a trace reduced to what an HTML page can hold and draw
// at any size (gpuscope report's timeline, issue 19): lanes grouped by process and by GPU,
// each lane's busy fraction over time at a fixed number of bins (drawn when zoomed out), and
// a bounded set of individual events (drawn when zoomed in, hovered for their details).
//
// Made by analyze::timeline_overview (analyze/timeline/timeline_overview.hpp) from a trace database;
// encoded for the page by render::timeline_overview_json (render/timeline_overview_json.hpp);
// drawn by src/render/report_page/timeline.js.
//
// Shapes and units:
//   - times are integer ns relative to base_ns (the trace's own time base,
//     core::TimelineHeader::base_ns, as `gpuscope export` writes them); end_ns is absolute;
//   - the drawn range is [range_begin_ns, range_end_ns) (relative): the first drawn event's
//     start to the last one's end (not process start and end), span_ns() long; an event
//     reaching outside it (an NVTX range left open) is cut at its edges;
//   - groups: one per process (its CUDA API and NVTX lanes), then one per physical GPU (its
//     streams); lanes: in drawing order, each naming its group; a group's lanes are
//     contiguous;
//   - density: per lane `bins` bytes; byte i is round(255 × busy fraction) of bin i, bin i
//     covering relative times range_begin_ns + [span × i / bins, span × (i + 1) / bins); busy
//     means covered by at least one of the lane's events (the union: nested NVTX ranges count
//     once);
//   - items: the individual events included, sorted by lane, start_ns, kind, then longer
//     first (an enclosing NVTX range before those it holds);
//     each names a string of `names` by index (names hold only what items reference, once);
//     a kernel's grid and block are an index into `launch_configs` (-1 for other kinds);
//   - counts: total_events (every event the lanes hold, marks included) and the number of
//     items; when items.size() < total_events the page says so (the rest is in the SQLite
//     file and `gpuscope export`).
//
// Plain data (core/: no I/O).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope::core {

/// What a lane holds.
enum class OverviewLaneKind : std::uint8_t {
  cuda_api = 0,    // a CPU thread's CUDA runtime and driver API calls
  nvtx = 1,        // a CPU thread's NVTX ranges and marks (PyTorch op/module ranges included)
  gpu_stream = 2,  // a GPU stream's kernels, memcpys and memsets
};

/// What an item is.
enum class OverviewItemKind : std::uint8_t {
  api_call = 0,
  nvtx_range = 1,
  nvtx_mark = 2,  // duration_ns 0
  kernel = 3,
  memcpy = 4,
  memset = 5,
};

/// A process (its threads' lanes) or a physical GPU (its streams' lanes).
struct OverviewGroup {
  bool is_gpu = false;
  std::int64_t id = 0;  // pid, or gpu_index for a GPU
  std::string label;    // "train (pid 4242, rank 0)", "GPU 0"
  std::string detail;   // the command line, or the GPU's name ("NVIDIA H100 80GB HBM3"); "" if unknown
};

struct OverviewLane {
  std::int32_t group = 0;  // index into TimelineOverview::groups
  OverviewLaneKind kind = OverviewLaneKind::cuda_api;
  std::string label;                  // "main (4242) · CUDA API", "thread 77 · NVTX", "stream 7", "stream 7 (pid 12)"
  std::int64_t pid = 0;               // the process of the thread or of the stream's work
  std::int64_t tid = 0;               // CPU lanes: the thread; GPU lanes: 0
  std::int64_t gpu_index = -1;        // GPU lanes: the physical GPU; CPU lanes: -1
  std::int64_t stream_id = -1;        // GPU lanes: the stream; CPU lanes: -1
  std::int64_t events = 0;            // events on the lane (marks included)
  std::int64_t busy_ns = 0;           // time covered by at least one of them (ns)
  std::vector<std::uint8_t> density;  // `bins` bytes: 255 × busy fraction per bin
};

/// A kernel's launch configuration.
struct OverviewLaunchConfig {
  std::array<std::int64_t, 3> grid{};   // blocks
  std::array<std::int64_t, 3> block{};  // threads per block
  friend bool operator==(const OverviewLaunchConfig&, const OverviewLaunchConfig&) = default;
};

/// One event drawn individually.
struct OverviewItem {
  std::int32_t lane = 0;
  OverviewItemKind kind = OverviewItemKind::api_call;
  std::int64_t start_ns = 0;     // relative to base_ns
  std::int64_t duration_ns = 0;  // ≥ 0
  std::int32_t name = 0;         // index into names
  /// API calls, kernels, memcpys, memsets: the correlation id joining a GPU activity to the
  /// API call that launched it in the same process (lane pid); 0 = none.
  std::int64_t correlation_id = 0;
  std::int32_t launch_config = -1;  // kernels: index into launch_configs; else -1
  std::int64_t bytes = 0;           // memcpys and memsets: bytes moved or set; else 0
  friend bool operator==(const OverviewItem&, const OverviewItem&) = default;
};

struct TimelineOverview {
  std::int64_t base_ns = 0;         // absolute (trace clock, ns): every other time is relative to it
  std::int64_t end_ns = 0;          // absolute: the trace's end (core::TimelineTracks::end_ns)
  std::int64_t range_begin_ns = 0;  // relative: the first drawn event's start (0 without events)
  std::int64_t range_end_ns = 0;    // relative: the last drawn event's end
  std::int32_t bins = 0;            // density bins per lane (0 when there are no lanes)
  std::vector<OverviewGroup> groups;
  std::vector<OverviewLane> lanes;
  std::vector<OverviewItem> items;
  std::vector<std::string> names;
  std::vector<OverviewLaunchConfig> launch_configs;
  std::int64_t total_events = 0;  // every event on the lanes; items.size() of them are included
  std::int64_t item_cap = 0;      // the most items the options allowed
  /// How items were chosen: "all" (every event) or "longest and spread" (the longest events,
  /// plus the longest of each lane's time slots, plus the API calls that launched included
  /// GPU work: analyze/timeline/timeline_overview.hpp).
  std::string selection = "all";

  /// The drawn range's length (ns), at least 1.
  [[nodiscard]] std::int64_t span_ns() const {
    return range_end_ns > range_begin_ns ? range_end_ns - range_begin_ns : 1;
  }
};

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
