#include "analyze/launch_reports.hpp"

#include "analyze/gpu_busy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "analyze/nsys_reports.hpp"
#include "core/stats.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;
using stats::Interval;

// Verdict thresholds (see the header).
constexpr double kIdleShareForLaunchBound = 0.10;
constexpr double kLaunchingShareOfIdle = 0.50;
constexpr double kBlockedShareForSyncBound = 0.20;

Cell real_or_null(double v) { return std::isnan(v) || std::isinf(v) ? Cell{std::monostate{}} : Cell{v}; }

std::string percent_text(double fraction) {
  char buf[32];
  // Whole percent, as a verdict reads; one decimal below 10 % so small shares are not "0 %".
  std::snprintf(buf, sizeof buf, fraction < 0.1 ? "%.1f %%" : "%.0f %%", fraction * 100.0);
  return buf;
}

std::vector<Interval> read_intervals(Database& db, std::string_view sql) {
  std::vector<Interval> out;
  Statement st = db.prepare(sql);
  while (st.step())
    if (!st.is_null(0) && !st.is_null(1)) out.push_back({st.column_int(0), st.column_int(1)});
  return out;
}

// Length of the intersection of two disjoint, sorted interval lists (interval_union's output).
std::int64_t overlap_ns(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].start_ns, b[j].start_ns);
    const std::int64_t hi = std::min(a[i].end_ns, b[j].end_ns);
    if (hi > lo) total += hi - lo;
    (a[i].end_ns < b[j].end_ns ? i : j) += 1;
  }
  return total;
}

// Kernels joined to their launch call (same pid and correlation_id).
constexpr std::string_view kLaunchJoin =
    " FROM v_kernels k JOIN api_calls a ON a.pid = k.pid AND a.correlation_id = k.correlation_id";
constexpr std::string_view kKernelName = "COALESCE(k.short_name, k.name, '<unknown kernel>')";

std::map<std::vector<std::string>, detail::ValueGroup> by_key(Database& db, const std::string& sql) {
  std::map<std::vector<std::string>, detail::ValueGroup> out;
  for (detail::ValueGroup& g : detail::group_values_by_key(db, sql)) out[g.key] = std::move(g);
  return out;
}

std::vector<double> as_doubles(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

Report launch_overhead(Database& db) {
  Report r;
  r.name = "launch_overhead";
  r.title = "Kernel Launch Overhead";
  r.add_column("Launches", "", ColumnType::kInteger)
      .add_column("CPU Launch Time avg", "ns", ColumnType::kReal)
      .add_column("GPU Time avg", "ns", ColumnType::kReal)
      .add_column("Queue Delay avg", "ns", ColumnType::kReal)
      .add_column("Queue Delay median", "ns", ColumnType::kReal)
      .add_column("Launch/GPU", "", ColumnType::kReal)
      .add_column("Name", "", ColumnType::kText);

  const std::string name(kKernelName), join(kLaunchJoin);
  // GPU time drives the row order; the other values share its keys (same join).
  const auto gpu = detail::group_values_by_key(db, "SELECT " + name + ", k.end_ns - k.start_ns" + join);
  auto launch = by_key(db, "SELECT " + name + ", a.end_ns - a.start_ns" + join);
  auto queue = by_key(db, "SELECT " + name + ", k.start_ns - a.end_ns" + join);
  for (const detail::ValueGroup& g : gpu) {
    const double gpu_avg = stats::mean(as_doubles(g.values));
    const double launch_avg = stats::mean(as_doubles(launch[g.key].values));
    const std::vector<double> q = as_doubles(queue[g.key].values);
    r.rows.push_back(Row{static_cast<std::int64_t>(g.values.size()), real_or_null(launch_avg), real_or_null(gpu_avg),
                         real_or_null(stats::mean(q)), real_or_null(stats::median(q)),
                         gpu_avg > 0 ? real_or_null(launch_avg / gpu_avg) : Cell{std::monostate{}}, g.key[0]});
  }
  if (r.rows.empty()) {
    r.add_note(NoteLevel::kInfo, "no CUDA kernels with a launch call in the capture range");
    return r;
  }

  Statement unmatched = db.prepare(
      "SELECT COUNT(*) FROM kernels k WHERE NOT EXISTS (SELECT 1 FROM api_calls a "
      "WHERE a.pid = k.pid AND a.correlation_id = k.correlation_id)");
  if (unmatched.step() && unmatched.column_int(0) > 0)
    r.add_note(NoteLevel::kWarning, std::to_string(unmatched.column_int(0)) +
                                        " kernels have no launch call in the trace and are left out");

  // Whole-run arithmetic (see the header).
  const Interval wall = detail::wall_span(db);
  const std::vector<Interval> w = stats::interval_union({wall});
  const std::vector<Interval> busy = stats::interval_union(read_intervals(
      db, "SELECT start_ns, end_ns FROM kernels UNION ALL SELECT start_ns, end_ns FROM memcpys "
          "UNION ALL SELECT start_ns, end_ns FROM memsets"));
  const std::vector<Interval> launching = stats::interval_union(read_intervals(
      db, "SELECT a.start_ns, a.end_ns FROM api_calls a WHERE EXISTS (SELECT 1 FROM kernels k "
          "WHERE k.pid = a.pid AND k.correlation_id = a.correlation_id)"));
  const std::int64_t wall_ns = stats::union_length(w);
  std::vector<Interval> busy_in_wall;  // B ∩ W, still disjoint and sorted
  for (const Interval& b : busy)
    busy_in_wall.push_back({std::max(b.start_ns, wall.start_ns), std::min(b.end_ns, wall.end_ns)});
  busy_in_wall = stats::interval_union(std::move(busy_in_wall));
  const std::int64_t idle_ns = wall_ns - stats::union_length(busy_in_wall);
  const std::int64_t launching_idle_ns = overlap_ns(launching, w) - overlap_ns(launching, busy_in_wall);

  // Graph saving: consecutive kernels on one stream where the GPU waited for the next launch.
  std::int64_t saving_ns = 0, waits = 0;
  {
    Statement st = db.prepare(
        "SELECT k.pid, k.device_id, k.stream_id, k.start_ns, k.end_ns, a.end_ns" + join +
        " ORDER BY k.pid, k.device_id, k.stream_id, k.start_ns, k.end_ns");
    std::int64_t prev_stream[3] = {0, 0, 0};
    std::int64_t prev_end = 0;
    bool have_prev = false;
    while (st.step()) {
      const std::int64_t stream[3] = {st.column_int(0), st.column_int(1), st.column_int(2)};
      const std::int64_t start = st.column_int(3), end = st.column_int(4), launch_end = st.column_int(5);
      const bool same = have_prev && std::equal(stream, stream + 3, prev_stream);
      if (same && launch_end > prev_end && start > prev_end) {
        saving_ns += start - prev_end;
        ++waits;
      }
      std::copy(stream, stream + 3, prev_stream);
      prev_end = same ? std::max(prev_end, end) : end;
      have_prev = true;
    }
  }

  const double idle_share = wall_ns > 0 ? static_cast<double>(idle_ns) / static_cast<double>(wall_ns) : 0.0;
  const double launching_share =
      idle_ns > 0 ? static_cast<double>(launching_idle_ns) / static_cast<double>(idle_ns) : 0.0;
  r.add_note(NoteLevel::kInfo, "wall " + std::to_string(wall_ns) + " ns, GPU idle " + std::to_string(idle_ns) +
                                   " ns, CPU launching while the GPU was idle " +
                                   std::to_string(launching_idle_ns) + " ns (launch-bound share " +
                                   percent_text(launching_share) + ")");
  r.add_note(NoteLevel::kInfo, "time a CUDA graph could save: about " + std::to_string(saving_ns) + " ns (" +
                                   std::to_string(waits) +
                                   " gaps where a kernel's launch call returned after the previous kernel on "
                                   "its stream had finished)");
  r.add_note(NoteLevel::kInfo,
             "Queue Delay = kernel start - launch call end, not clamped: negative means the kernel started "
             "before its launch call returned");
  if (idle_share >= kIdleShareForLaunchBound && launching_share >= kLaunchingShareOfIdle) {
    r.add_note(NoteLevel::kWarning, "launch-bound: the GPU was idle " + percent_text(idle_share) +
                                        " of the time and the CPU was launching during " +
                                        percent_text(launching_share) +
                                        " of that idle time — batch work, use CUDA graphs "
                                        "(torch.compile mode='reduce-overhead')");
  } else {
    r.add_note(NoteLevel::kInfo, "not launch-bound: the GPU was idle " + percent_text(idle_share) +
                                     " of the time and the CPU was launching during " +
                                     percent_text(launching_share) + " of that idle time");
  }
  return r;
}

namespace {

// Synchronizing API calls (see the header) and syncs records, as (name, duration).
constexpr std::string_view kSyncWhere =
    " FROM v_api_calls WHERE name IN ('cudaDeviceSynchronize', "
    "'cudaStreamSynchronize', 'cudaEventSynchronize', 'cudaStreamWaitEvent', 'cuCtxSynchronize', "
    "'cuStreamSynchronize', 'cuEventSynchronize') OR ((name LIKE 'cudaMemcpy%' OR name LIKE 'cuMemcpy%') "
    "AND name NOT LIKE '%Async%')";

}  // namespace

Report sync_wait(Database& db) {
  Report r;
  r.name = "sync_wait";
  r.title = "CPU Waits on the GPU";
  r.add_column("Name", "", ColumnType::kText)
      .add_column("Calls", "", ColumnType::kInteger)
      .add_column("Total Blocked", "ns", ColumnType::kInteger)
      .add_column("Avg", "ns", ColumnType::kReal)
      .add_column("Max", "ns", ColumnType::kInteger)
      .add_column("Blocked", "%", ColumnType::kReal);

  const std::string sql = "SELECT name, duration_ns" + std::string(kSyncWhere) +
                          " UNION ALL SELECT '[sync] ' || COALESCE(sync_type, 'unknown'), end_ns - start_ns FROM syncs";
  const std::int64_t wall_ns = stats::union_length({detail::wall_span(db)});
  auto percent = [&](std::int64_t ns) -> Cell {
    if (wall_ns <= 0) return std::monostate{};
    return static_cast<double>(ns) / static_cast<double>(wall_ns) * 100.0;
  };
  for (const detail::ValueGroup& g : detail::group_values_by_key(db, sql)) {
    r.rows.push_back(Row{g.key[0], static_cast<std::int64_t>(g.values.size()), g.total,
                         real_or_null(stats::mean(as_doubles(g.values))),
                         *std::max_element(g.values.begin(), g.values.end()), percent(g.total)});
  }
  if (r.rows.empty()) {
    r.add_note(NoteLevel::kInfo, "no synchronizing CUDA calls in the capture range");
    return r;
  }

  const std::string intervals_sql =
      "SELECT start_ns, end_ns" + std::string(kSyncWhere) + " UNION ALL SELECT start_ns, end_ns FROM syncs";
  const std::int64_t blocked_ns = stats::union_length(read_intervals(db, intervals_sql));
  const double share = wall_ns > 0 ? static_cast<double>(blocked_ns) / static_cast<double>(wall_ns) : 0.0;
  r.add_note(NoteLevel::kInfo, "total blocked: " + std::to_string(blocked_ns) +
                                   " ns (union over threads and rows; an API call and its sync record count "
                                   "once), " + percent_text(share) + " of the wall time");
  if (share >= kBlockedShareForSyncBound) {
    r.add_note(NoteLevel::kWarning, "sync-bound: the CPU was blocked on the GPU " + percent_text(share) +
                                        " of the time, mostly in " + std::get<std::string>(r.rows[0][0]) +
                                        " — remove needless synchronizations (.item(), .cpu(), printing "
                                        "tensors) and use async copies from pinned memory");
  } else {
    r.add_note(NoteLevel::kInfo, "not sync-bound: the CPU was blocked on the GPU " + percent_text(share) +
                                     " of the time");
  }
  return r;
}

}  // namespace gpuscope::analyze
