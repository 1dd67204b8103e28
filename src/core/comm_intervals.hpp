// comm_intervals: the interval arithmetic behind comm_overlap, rank_sum and stragglers
// (analyze/comm/nccl_reports.hpp). Pure functions on ns intervals ([start_ns, end_ns), half open,
// core/stats.hpp's Interval: an interval with end ≤ start is empty), no I/O.
//
// Compute and communication on one GPU: compute is the union of its non-NCCL kernels,
// communication the union of its NCCL kernels, whatever their streams (kernels of one kind
// that overlap count once). Communication is "overlapped" where compute runs at the same
// moment on the same GPU, and "exposed" where it does not — HTA's get_comm_comp_overlap and
// Nsight Systems' nccl_gpu_overlap_trace recipe make the same split.
//
// Arrivals at a collective: every rank's kernel of one collective instance starts when that
// rank reaches it, and none can finish before the last rank has arrived; a rank that
// arrives early waits inside the kernel. The last arrival holds the others back by the time
// between it and the next-to-last arrival (had it arrived with that rank, the instance could
// have ended that much earlier).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/stats.hpp"

namespace gpuscope::core {

using stats::Interval;

/// The parts of `intervals` inside `window`, each cut to it; empty results dropped. Order kept.
[[nodiscard]] std::vector<Interval> clip_intervals(std::span<const Interval> intervals, Interval window);

/// Length in ns of the time covered by both unions (each given as any intervals: they are
/// merged first). Either empty → 0.
[[nodiscard]] std::int64_t overlap_length(std::vector<Interval> a, std::vector<Interval> b);

/// The parts of `window` that no interval covers (the idle gaps), sorted. An empty window → {}.
[[nodiscard]] std::vector<Interval> gaps(std::vector<Interval> busy, Interval window);

/// Compute and communication of one GPU over a window (file comment), ns.
struct OverlapSplit {
  std::int64_t window_ns = 0;      // length of the window
  std::int64_t compute_ns = 0;     // union of compute inside the window
  std::int64_t comm_ns = 0;        // union of communication inside the window
  std::int64_t overlapped_ns = 0;  // communication while compute runs
  std::int64_t exposed_ns = 0;     // comm_ns − overlapped_ns: communication with no compute beside it
  /// overlapped / communication × 100; NaN when there is no communication.
  [[nodiscard]] double overlap_percent() const;
  OverlapSplit& operator+=(const OverlapSplit& o);
};

/// Splits one GPU's work over `window` (intervals outside it are cut off).
[[nodiscard]] OverlapSplit split_overlap(std::span<const Interval> compute, std::span<const Interval> comm,
                                         Interval window);

/// One collective instance's arrivals (file comment), from each rank's arrival time in ns
/// (index = the rank's position in the caller's list).
struct Arrivals {
  std::size_t last = 0;               // index of the last arrival (the lowest index on a tie)
  std::int64_t lateness_ns = 0;       // last − next-to-last arrival; 0 for one rank or a tie
  std::int64_t spread_ns = 0;         // last − first arrival
  std::vector<std::int64_t> wait_ns;  // per index: last − its arrival (0 for the last)
};

/// nullopt for no arrivals.
[[nodiscard]] std::optional<Arrivals> arrivals(std::span<const std::int64_t> arrival_ns);

/// The start of the longest run of items equal to `who` (the earliest of equally long ones),
/// when that run is at least `min_run` long: where `who` starts being last for good, so that
/// a start-up step or two in which it happened to come last do not hide the onset of a rank
/// that stays late. nullopt when there is no such run, or min_run is 0.
[[nodiscard]] std::optional<std::size_t> longest_run_start(std::span<const std::int64_t> items, std::int64_t who,
                                                           std::size_t min_run);

}  // namespace gpuscope::core
