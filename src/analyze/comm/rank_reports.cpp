// comm_overlap and rank_sum: each rank's time split into compute, communication and idle,
// per step and over its span (nccl_reports.hpp).
#include "analyze/comm/nccl_reports.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "analyze/comm/comm_data.hpp"
#include "analyze/comm/comm_report_parts.hpp"
#include "core/saturating.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"

namespace gpuscope::analyze {

using detail::CommData;
using detail::RankFacts;
using namespace detail::comm_cells;  // the shared cells and note (comm_report_parts.hpp)

Report comm_overlap(const CommData& d) {
  Report r;
  r.name = "comm_overlap";
  r.title = "Compute and Communication Overlap";
  r.add_column("Rank", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Device", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Step", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Wall", "ms", ColumnType::kReal)
      .add_column("Compute", "ms", ColumnType::kReal)
      .add_column("Communication", "ms", ColumnType::kReal)
      .add_column("Overlapped", "ms", ColumnType::kReal)
      .add_column("Exposed Comm", "ms", ColumnType::kReal)
      .add_column("Overlap", "%", ColumnType::kReal)
      .add_column("Exposed of Wall", "%", ColumnType::kReal)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier);
  if (d.nccl_kernels == 0) {
    r.add_note(NoteLevel::kInfo, kNoNccl);
    return r;
  }
  core::OverlapSplit all;
  const auto add = [&](const RankFacts& rank, const std::optional<std::int64_t>& step, const core::OverlapSplit& s) {
    r.rows.push_back(Row{opt_int(rank.rank), rank.device, opt_int(step), ms(s.window_ns), ms(s.compute_ns),
                         ms(s.comm_ns), ms(s.overlapped_ns), ms(s.exposed_ns),
                         detail::real_or_null(s.overlap_percent()), share(s.exposed_ns, s.window_ns),
                         rank.pids.front()});
    all += s;
  };
  for (const RankFacts& rank : d.ranks) {
    if (d.has_steps) {
      for (const detail::StepSplit& s : rank.steps) add(rank, s.step, s.split);
    } else {
      add(rank, std::nullopt, rank.whole);
    }
  }
  const std::string scope = d.has_steps ? "the steps (torch_steps)" : "each rank's span (first to last GPU activity)";
  r.add_note(NoteLevel::kInfo, "all ranks over " + scope + ": communication " + units::duration_ns(all.comm_ns) + ", " +
                                   units::percent(all.overlap_percent()) +
                                   " of it behind compute on the same "
                                   "GPU; exposed communication " +
                                   units::duration_ns(all.exposed_ns) + ", " +
                                   units::percent_of(all.window_ns > 0 ? static_cast<double>(all.exposed_ns) /
                                                                             static_cast<double>(all.window_ns)
                                                                       : std::nan("")) +
                                   " of the wall time");
  r.add_note(NoteLevel::kInfo,
             "compute: the union of a GPU's non-NCCL kernels, communication: the union of its NCCL kernels (any "
             "stream); exposed communication runs while no compute kernel runs on the same GPU; Overlap (%) = "
             "Overlapped / Communication");
  if (d.has_steps) {
    std::string without;
    int n = 0;
    for (const RankFacts& rank : d.ranks)
      if (rank.steps.empty() && n++ < 8) without += (without.empty() ? "" : ", ") + detail::rank_label(rank);
    if (n > 0)
      r.add_note(NoteLevel::kInfo,
                 std::to_string(n) + " rank(s) have no steps and so no rows: " + without + (n > 8 ? ", ..." : ""));
  }
  return r;
}

Report rank_sum(const CommData& d) {
  Report r;
  r.name = "rank_sum";
  r.title = "Rank Summary";
  r.add_column("Rank", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Device", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Local Rank", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Host", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("Wall", "ms", ColumnType::kReal)
      .add_column("Busy", "ms", ColumnType::kReal)
      .add_column("Busy", "%", ColumnType::kReal)
      .add_column("Idle", "ms", ColumnType::kReal)
      .add_column("Communication", "ms", ColumnType::kReal)
      .add_column("Exposed Comm", "ms", ColumnType::kReal)
      .add_column("Steps", "", ColumnType::kInteger)
      .add_column("Median Step", "ms", ColumnType::kReal)
      .add_column("Step vs Median", "%", ColumnType::kReal)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier);
  if (d.ranks.empty()) {
    r.add_note(NoteLevel::kInfo, "no GPU activity in the capture range");
    return r;
  }
  // Each rank's median step, and the median of those.
  std::vector<double> medians(d.ranks.size(), std::nan(""));
  std::vector<double> known;
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    std::vector<double> walls;
    for (const detail::StepSplit& s : d.ranks[i].steps)
      walls.push_back(static_cast<double>(core::sat_sub(s.end_ns, s.start_ns)));
    if (walls.empty()) continue;
    medians[i] = stats::median(walls);
    known.push_back(medians[i]);
  }
  const double job_median = stats::median(known);
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    const RankFacts& k = d.ranks[i];
    const std::int64_t wall = core::sat_sub(k.span.end_ns, k.span.start_ns);
    r.rows.push_back(Row{opt_int(k.rank), k.device, opt_int(k.local_rank), k.host, ms(wall), ms(k.busy_ns),
                         share(k.busy_ns, wall), ms(std::max<std::int64_t>(0, wall - k.busy_ns)), ms(k.whole.comm_ns),
                         ms(k.whole.exposed_ns), static_cast<std::int64_t>(k.steps.size()),
                         detail::real_or_null(medians[i] / kNsPerMs),
                         detail::real_or_null((medians[i] - job_median) / job_median * 100.0), k.pids.front()});
  }
  r.add_note(NoteLevel::kInfo,
             "Wall: the rank's first to last GPU activity; Busy: the union of its kernels, copies and sets; "
             "Idle = Wall - Busy; Communication and Exposed Comm as comm_overlap over the whole span");
  if (known.size() >= 2) {
    std::optional<std::size_t> fast, slow;
    for (std::size_t i = 0; i < medians.size(); ++i) {
      if (std::isnan(medians[i])) continue;
      if (!fast || medians[i] < medians[*fast]) fast = i;
      if (!slow || medians[i] > medians[*slow]) slow = i;
    }
    r.add_note(NoteLevel::kInfo,
               "step time across " + std::to_string(known.size()) + " ranks: median " +
                   units::duration(job_median / 1e9) + "; fastest " + detail::rank_label(d.ranks[*fast]) + " " +
                   units::duration(medians[*fast] / 1e9) + ", slowest " + detail::rank_label(d.ranks[*slow]) + " " +
                   units::duration(medians[*slow] / 1e9) + ": a spread of " +
                   units::percent((medians[*slow] - medians[*fast]) / job_median * 100.0) + " of the median");
  } else if (known.empty()) {
    r.add_note(NoteLevel::kInfo,
               "no steps: per-rank step times need training steps (`gpuscope trace --pytorch=ops`, docs/pytorch.md)");
  }
  return r;
}

}  // namespace gpuscope::analyze
