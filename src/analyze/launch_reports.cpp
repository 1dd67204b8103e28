#include "analyze/launch_reports.hpp"

#include "analyze/gpu_busy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "analyze/nsys_reports.hpp"
#include "analyze/report_text.hpp"
#include "core/stats.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;
using stats::Interval;
using detail::percent_text;
using detail::real_or_null;

// Verdict thresholds (see the header).
constexpr double kIdleShareForLaunchBound = 0.10;
constexpr double kLaunchingShareOfIdle = 0.50;
constexpr double kBlockedShareForSyncBound = 0.20;

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

  const detail::LaunchBound lb = detail::launch_bound(db);
  r.add_note(NoteLevel::kInfo, "wall " + std::to_string(lb.wall_ns) + " ns, GPU idle " + std::to_string(lb.idle_ns) +
                                   " ns, CPU launching while the GPU was idle " +
                                   std::to_string(lb.launching_idle_ns) + " ns (launch-bound share " +
                                   percent_text(lb.launching_share) + ")");
  r.add_note(NoteLevel::kInfo, "time a CUDA graph could save: about " + std::to_string(lb.graph_saving_ns) + " ns (" +
                                   std::to_string(lb.graph_gaps) +
                                   " gaps where a kernel's launch call returned after the previous kernel on "
                                   "its stream had finished)");
  r.add_note(NoteLevel::kInfo,
             "Queue Delay = kernel start - launch call end, not clamped: negative means the kernel started "
             "before its launch call returned");
  if (lb.launch_bound) {
    r.add_note(NoteLevel::kWarning, "launch-bound: the GPU was idle " + percent_text(lb.idle_share) +
                                        " of the time and the CPU was launching during " +
                                        percent_text(lb.launching_share) +
                                        " of that idle time — batch work, use CUDA graphs "
                                        "(torch.compile mode='reduce-overhead')");
  } else {
    r.add_note(NoteLevel::kInfo, "not launch-bound: the GPU was idle " + percent_text(lb.idle_share) +
                                     " of the time and the CPU was launching during " +
                                     percent_text(lb.launching_share) + " of that idle time");
  }
  return r;
}

detail::LaunchBound detail::launch_bound(Database& db) {
  // Whole-run arithmetic (see the header).
  const Interval wall = detail::wall_span(db);
  const std::vector<Interval> w = stats::interval_union({wall});
  const std::vector<Interval> busy = stats::interval_union(read_intervals(
      db, "SELECT start_ns, end_ns FROM kernels UNION ALL SELECT start_ns, end_ns FROM memcpys "
          "UNION ALL SELECT start_ns, end_ns FROM memsets"));
  const std::vector<Interval> launching = stats::interval_union(read_intervals(
      db, "SELECT a.start_ns, a.end_ns FROM api_calls a WHERE EXISTS (SELECT 1 FROM kernels k "
          "WHERE k.pid = a.pid AND k.correlation_id = a.correlation_id)"));
  LaunchBound out;
  out.wall_ns = stats::union_length(w);
  std::vector<Interval> busy_in_wall;  // B ∩ W, still disjoint and sorted
  for (const Interval& b : busy)
    busy_in_wall.push_back({std::max(b.start_ns, wall.start_ns), std::min(b.end_ns, wall.end_ns)});
  busy_in_wall = stats::interval_union(std::move(busy_in_wall));
  out.idle_ns = out.wall_ns - stats::union_length(busy_in_wall);
  out.launching_idle_ns = overlap_ns(launching, w) - overlap_ns(launching, busy_in_wall);

  // Graph saving: consecutive kernels on one stream where the GPU waited for the next launch.
  {
    Statement st = db.prepare(
        "SELECT k.pid, k.device_id, k.stream_id, k.start_ns, k.end_ns, a.end_ns" + std::string(kLaunchJoin) +
        " ORDER BY k.pid, k.device_id, k.stream_id, k.start_ns, k.end_ns");
    std::int64_t prev_stream[3] = {0, 0, 0};
    std::int64_t prev_end = 0;
    bool have_prev = false;
    while (st.step()) {
      const std::int64_t stream[3] = {st.column_int(0), st.column_int(1), st.column_int(2)};
      const std::int64_t start = st.column_int(3), end = st.column_int(4), launch_end = st.column_int(5);
      const bool same = have_prev && std::equal(stream, stream + 3, prev_stream);
      if (same && launch_end > prev_end && start > prev_end) {
        out.graph_saving_ns += start - prev_end;
        ++out.graph_gaps;
      }
      std::copy(stream, stream + 3, prev_stream);
      prev_end = same ? std::max(prev_end, end) : end;
      have_prev = true;
    }
  }

  out.idle_share = out.wall_ns > 0 ? static_cast<double>(out.idle_ns) / static_cast<double>(out.wall_ns) : 0.0;
  out.launching_share =
      out.idle_ns > 0 ? static_cast<double>(out.launching_idle_ns) / static_cast<double>(out.idle_ns) : 0.0;
  out.launch_bound = out.idle_share >= kIdleShareForLaunchBound && out.launching_share >= kLaunchingShareOfIdle;
  return out;
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

  const detail::SyncBlocked sb = detail::sync_blocked(db);
  auto percent = [&](std::int64_t ns) -> Cell {
    if (sb.wall_ns <= 0) return std::monostate{};
    return static_cast<double>(ns) / static_cast<double>(sb.wall_ns) * 100.0;
  };
  for (const detail::ValueGroup& g : sb.calls) {
    r.rows.push_back(Row{g.key[0], static_cast<std::int64_t>(g.values.size()), g.total,
                         real_or_null(stats::mean(as_doubles(g.values))),
                         *std::max_element(g.values.begin(), g.values.end()), percent(g.total)});
  }
  if (r.rows.empty()) {
    r.add_note(NoteLevel::kInfo, "no synchronizing CUDA calls in the capture range");
    return r;
  }

  r.add_note(NoteLevel::kInfo, "total blocked: " + std::to_string(sb.blocked_ns) +
                                   " ns (union over threads and rows; an API call and its sync record count "
                                   "once), " + percent_text(sb.share) + " of the wall time");
  if (sb.sync_bound) {
    r.add_note(NoteLevel::kWarning, "sync-bound: the CPU was blocked on the GPU " + percent_text(sb.share) +
                                        " of the time, mostly in " + sb.calls.front().key[0] +
                                        " — remove needless synchronizations (.item(), .cpu(), printing "
                                        "tensors) and use async copies from pinned memory");
  } else {
    r.add_note(NoteLevel::kInfo, "not sync-bound: the CPU was blocked on the GPU " + percent_text(sb.share) +
                                     " of the time");
  }
  return r;
}

detail::SyncBlocked detail::sync_blocked(Database& db) {
  SyncBlocked out;
  out.calls = group_values_by_key(db, "SELECT name, duration_ns" + std::string(kSyncWhere) +
                                          " UNION ALL SELECT '[sync] ' || COALESCE(sync_type, 'unknown'), "
                                          "end_ns - start_ns FROM syncs");
  out.wall_ns = stats::union_length({wall_span(db)});
  if (out.calls.empty()) return out;
  const std::string intervals_sql =
      "SELECT start_ns, end_ns" + std::string(kSyncWhere) + " UNION ALL SELECT start_ns, end_ns FROM syncs";
  out.blocked_ns = stats::union_length(read_intervals(db, intervals_sql));
  out.share = out.wall_ns > 0 ? static_cast<double>(out.blocked_ns) / static_cast<double>(out.wall_ns) : 0.0;
  out.sync_bound = out.share >= kBlockedShareForSyncBound;
  return out;
}

}  // namespace gpuscope::analyze
