// report_page: a trace database → core::ReportPage (core/report_page.hpp), the data of the
// HTML page `gpuscope report` writes (render/html_report.hpp draws it; docs/report.md).
//
// Every number on the page comes from the code `gpuscope stats` runs, so the two agree:
//   - the window: judged_window (analyze/timeline/judged_window.hpp), as `gpuscope stats`: the
//     headline (run_report(db, "top")), the judged tables (nvtx_sum, op_sum, module_sum) and the
//     per-GPU split judge it, and carry its note; options.whole_run judges the whole process;
//   - tables: run_report(db, NAME) for kTableReports, each kept when it has rows
//     (cuda_gpu_kern_sum always);
//   - steps: judged_window's steps, whatever their source (PyTorch steps, NVTX step ranges,
//     iterations found in the GPU work), as step_sum lists them;
//   - per-GPU time: the kernels, memcpys and memsets of each physical GPU (GpuIndexMap), split
//     as core/report_page.hpp says; their sum is gpu_util's busy time;
//   - series: TraceTimeline::memory and ::gpu_metric_counters (analyze/timeline/timeline.hpp),
//     downsampled by downsample_min_max;
//   - timeline: analyze::timeline_overview (analyze/timeline/timeline_overview.hpp);
//   - tokens: analyze::token_timeline (analyze/llm/llm_token_timeline.hpp): llm_sum's generations.
// Threads: with options.parallel and a trace file, the headline, the timeline and the rest are
// computed at once, each on its own read-only connection (store::open_trace of db.path()).
// Memory: the GPU operations' intervals are held once (as gpu_busy does; event budget
// checked), the rest is bounded by the page's caps.
//
// Errors: store::DatabaseError (store::TraceDamagedError for a damaged file) as the reports.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/timeline/timeline_overview.hpp"
#include "core/report_page.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// The stats reports the page shows as tables, in this order.
inline constexpr std::array<std::string_view, 8> kTableReports = {
    "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "nvtx_sum", "nvtx_gpu_proj_sum", "op_sum", "module_sum", "step_sum",
    "gpu_idle_py"};

struct ReportPageOptions {
  std::string trace_name;  // shown in the title
  bool whole_run = false;  // as `stats --whole-run`: no steady-state scoping of the headline
  bool timeline = true;    // build the timeline overview
  TimelineOverviewOptions timeline_options;
  /// A trace file (not ":memory:") is read by three connections at once: the headline, the
  /// rest, the timeline (each part is single-threaded; the file is only read).
  bool parallel = true;
};

/// The page of the trace in `db` (see the file comment).
[[nodiscard]] core::ReportPage report_page(store::Database& db, const ReportPageOptions& options = {});

/// At most `max_points` of the points (t[i], v[i]) (t ascending): all when there are that
/// many or fewer; else the points cut into max_points / 2 runs of consecutive points, and of
/// each run its smallest and its largest value, in time order (one point when they are the
/// same), so peaks and dips survive. The first and the last point are always kept.
/// Pure: for tests.
void downsample_min_max(std::vector<std::int64_t>& t, std::vector<double>& v, std::size_t max_points);

/// Steps (in order) grouped into at most max_bars bars: each bar the step with the longest
/// wall time of a run of ceil(n / max_bars) consecutive steps, its `steps` the run's length.
/// Pure: for tests.
[[nodiscard]] std::vector<core::PageStep> group_steps(std::span<const core::PageStep> steps, std::size_t max_bars);

}  // namespace gpuscope::analyze
