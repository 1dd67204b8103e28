// gpu_util: is the GPU busy, and is "busy" the same as "used"? A report of `gpuscope stats`.
//
// One row per physical GPU with activity (GPU index as in trace_summary), sorted by index:
//   GPU, Name, Wall Time (ms), Busy Time (ms), Busy (%), SM Coverage (%),
//   [SM Active (%), Tensor Active (%)], Max Concurrent Streams, Kernels
//
// Definitions
//   Wall, Busy: as trace_summary (analyze/common/gpu_busy.hpp): busy = union of the GPU's kernel,
//     memcpy and memset intervals. Busy (%) = busy / wall × 100 (per GPU, so on a one-GPU
//     trace it equals trace_overview's "GPU Busy"); NULL when the wall time is 0.
//   SM Coverage (%): how much of the GPU's SMs × wall the kernels could occupy.
//     For each kernel, blocks/SM = occupancy::compute (core/occupancy.hpp) of its block
//     size, registers and static + dynamic shared memory on its device, and
//       SMs it can occupy at once = min(sm_count, ceil(grid blocks / blocks per SM)).
//     At each instant the occupied SMs are the sum over running kernels, capped at sm_count
//     (concurrent kernels share the GPU); coverage = ∫ occupied SMs dt / (sm_count × wall)
//     × 100. Memcpys and memsets occupy no SMs, so SM Coverage ≤ Busy. Kernels without
//     launch facts (grid, block, device limits) count as occupying no SMs, with a warning
//     note; NULL when no kernel has them or the wall time is 0.
//   SM Active (%), Tensor Active (%): only in a trace with sampled GPU metrics (trace
//     --gpu-metrics): the GPU's counters sm__cycles_active (cycles with a warp on an SM,
//     averaged over the SMs) and the tensor pipe's, time-weighted over the GPU's samples inside
//     the wall span (analyze/metrics/gpu_metrics_data.hpp); NULL for a GPU without samples. One info
//     note (after the idle gaps) says what they are beside Busy and SM Coverage and how much
//     of the wall time the samples cover. Without samples the report is as before.
//   Max Concurrent Streams: the most distinct streams with a kernel running at one instant
//     (a kernel ending at t and one starting at t do not overlap).
//   Idle gaps: the gaps between consecutive busy intervals (before the first and after
//     the last activity are not gaps), in four buckets: < 10 µs, 10–100 µs, 0.1–1 ms,
//     ≥ 1 ms (lower bound inclusive). Given per GPU as an info note: count and total.
//   Verdict (one note per GPU): busy ≥ 50 % and coverage < half of busy → warning
//     "busy 95 % but SM coverage 12 %: ... busy time is not utilization"; busy < 50 % →
//     the GPU idles most of the time; else kernels fill most SMs while it is busy.
//   gpuscope's own cost (one info note for the run, after the others, only when the trace
//     records meta tracer_launch_cost_ns; analyze/common/tracer_share.hpp): total tracer time =
//     launch calls × tracer_launch_cost_ns + other API calls × tracer_api_cost_ns (0 when
//     that key is missing), in ns and as % of the wall time, with tracer_cost_method.
//     Launch calls: distinct API calls with a kernel of the same pid and correlation_id
//     (LaunchBound::launch_calls); other API calls: every other row of api_calls.
//     Informational: no number of the table changes.
//
// No GPU activity → no rows and one note "no GPU activity in the capture range".
// Errors: store::DatabaseError if the database lacks the schema's tables.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analyze/nsys/verdict.hpp"
#include "core/report.hpp"
#include "core/stats.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

struct IdleGapBucket {
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
};

/// Idle gaps by length: [0] < 10 µs, [1] 10–100 µs, [2] 0.1–1 ms, [3] ≥ 1 ms.
using IdleGapHistogram = std::array<IdleGapBucket, 4>;

/// Bucket upper bounds in ns (exclusive) of the first three buckets.
inline constexpr std::array<std::int64_t, 3> kIdleGapBoundsNs = {10'000, 100'000, 1'000'000};

/// The gaps between consecutive intervals of `busy_union` (disjoint and sorted, as
/// stats::interval_union returns). Fewer than 2 intervals → all buckets empty.
[[nodiscard]] IdleGapHistogram idle_gaps(std::span<const stats::Interval> busy_union);

/// Low SM coverage: coverage below this share of busy time (both of the wall time).
inline constexpr double kLowCoverageShareOfBusy = 0.5;

/// The gpu_util report (see the file comment).
[[nodiscard]] Report gpu_util(store::Database& db);

namespace detail {

/// The numbers behind one gpu_util row (definitions above). Also used by `top`.
struct GpuUtilization {
  std::int64_t gpu = 0;
  std::string name;
  std::int64_t wall_ns = 0;
  std::int64_t busy_ns = 0;
  std::int64_t kernels = 0;
  std::int64_t sm_count = 0;  // 0 when no kernel has launch facts
  double sm_ns = 0;           // ∫ occupied SMs dt (ns × SMs)
  std::int64_t max_streams = 0;
  std::int64_t unknown_kernels = 0;  // kernels without launch facts
  IdleGapHistogram gaps{};
};

/// The low SM coverage diagnosis (gpu_util's per-GPU verdict and top's): fires when
/// coverage < kLowCoverageShareOfBusy × busy; busy and coverage are fractions of the wall
/// time (coverage of SMs × wall time); evidence also gives coverage / busy, the share of the
/// SMs the kernels could occupy while the GPU was busy.
[[nodiscard]] Verdict low_coverage_verdict(double busy, double coverage);

/// One entry per physical GPU with activity, sorted by GPU index.
[[nodiscard]] std::vector<GpuUtilization> gpu_utilization(store::Database& db);

}  // namespace detail

}  // namespace gpuscope::analyze
