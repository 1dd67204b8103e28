#include "analyze/nsys/launch_reports.hpp"
#include "core/saturating.hpp"
#include "analyze/common/analysis_cache.hpp"

#include "analyze/common/event_budget.hpp"
#include "analyze/common/gpu_busy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/common/report_text.hpp"
#include "analyze/common/tracer_share.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::real_or_null;
using detail::TracerCost;
using stats::Interval;
using store::Database;
using store::Statement;

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

// One kernel joined to its launch call (same pid and correlation_id): what launch_overhead
// and launch_bound need, read once per report (the join is most of their cost on a large
// trace, so each reads it in one pass and groups in memory by integer key, not by text).
struct LaunchedKernel {
  std::int64_t pid, device_id, stream_id, correlation_id;
  std::int64_t name_id;  // short name if known, else full name; -1 when neither
  std::int64_t start_ns, end_ns;
  std::int64_t launch_start_ns, launch_end_ns;
};

// Peak memory of the launch analysis per kernel (bytes; analyze/common/event_budget.hpp): the
// cached join, the launch intervals and their unions, the busy intervals; measured on a
// 10M-event trace and rounded up.
constexpr std::int64_t kLaunchBytesPerKernel = 200;

std::vector<LaunchedKernel> read_launched_kernels(Database& db) {
  // Counted before the join is read: each kernel joins one launch call (more only when
  // a damaged trace repeats a correlation id).
  check_event_budget({"launch_overhead (also top)", "kernels", db.query_int("SELECT COUNT(*) FROM kernels").value_or(0),
                      kLaunchBytesPerKernel, ""});
  Statement st = db.prepare(
      "SELECT k.pid, k.device_id, k.stream_id, k.correlation_id, COALESCE(k.short_name_id, k.name_id, -1), "
      "k.start_ns, k.end_ns, a.start_ns, a.end_ns "
      "FROM kernels k JOIN api_calls a ON a.pid = k.pid AND a.correlation_id = k.correlation_id");
  std::vector<LaunchedKernel> out;
  while (st.step())
    out.push_back({st.column_int(0), st.column_int(1), st.column_int(2), st.column_int(3), st.column_int(4),
                   st.column_int(5), st.column_int(6), st.column_int(7), st.column_int(8)});
  return out;
}

std::vector<double> as_doubles(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

std::string string_or(Database& db, std::int64_t id, std::string fallback) {
  Statement st = db.prepare("SELECT value FROM strings WHERE id = ?");
  st.bind(1, id);
  return st.step() && !st.is_null(0) ? st.column_text(0) : fallback;
}

detail::LaunchBound compute_launch_bound(Database& db, const std::vector<LaunchedKernel>& launched);

// "C ns per launch, <method>" for the notes; the method only when the trace names one.
std::string cost_text(const detail::LaunchBound& lb, const TracerCost& cost) {
  std::string text = units::ns_count(lb.tracer_launch_cost_ns) + " per launch";
  if (!cost.method.empty()) text += ", " + cost.method;
  return text;
}

// How much of the launching-while-idle time is gpuscope's own, or that nobody knows.
void add_tracer_cost_note(Report& r, const detail::LaunchBound& lb, const TracerCost& cost) {
  if (!lb.tracer_cost_known) {
    // The launcher says why when it did not calibrate ("not calibrated: --calibrate=never").
    const std::string why = cost.method.empty() ? "recorded before calibration" : cost.method;
    r.add_note(NoteLevel::kInfo,
               "gpuscope's own cost per launch is unknown for this trace (" + why + "); launch times include it");
    return;
  }
  const double part = lb.launching_idle_ns > 0
                          ? static_cast<double>(lb.tracer_idle_ns) / static_cast<double>(lb.launching_idle_ns)
                          : 0.0;
  r.add_note(NoteLevel::kInfo, "of the " + units::duration_ns(lb.launching_idle_ns) +
                                   " the CPU spent in launch calls while the GPU was idle, about " +
                                   units::duration_ns(lb.tracer_idle_ns) + " (" + units::percent_of(part) +
                                   ") is gpuscope's own tracing cost: " + cost_text(lb, cost));
}

void add_graph_saving_note(Report& r, const detail::LaunchBound& lb) {
  const std::string gaps = std::to_string(lb.graph_gaps) +
                           " gaps where a kernel's launch call returned after the previous kernel on its stream "
                           "had finished";
  if (!lb.launch_bound) {
    r.add_note(NoteLevel::kInfo, gaps + " (" + units::duration_ns(lb.graph_saving_ns) +
                                     " in all); no CUDA graph saving is claimed: the run is not launch-bound, so "
                                     "the GPU mostly waits for CPU work outside launch calls");
    return;
  }
  std::string text = "time a CUDA graph could save: about " + units::duration_ns(lb.graph_saving_bound_ns);
  if (lb.tracer_cost_known)
    text += " without gpuscope's own cost (" + units::duration_ns(lb.graph_saving_ns) + " of gaps as traced)";
  r.add_note(NoteLevel::kInfo, text + ", at most the GPU's idle time (" + gaps + ")");
}

// The verdict, from the untraced numbers (equal to the traced ones when the cost is unknown).
void add_verdict_note(Report& r, const detail::LaunchBound& lb) {
  if (lb.launch_bound_only_with_tracer) {
    r.add_note(NoteLevel::kInfo, "would look launch-bound (share " + units::percent_of(lb.launching_share) +
                                     " of the GPU's idle time) but only because of gpuscope's own cost; without it "
                                     "the share is " +
                                     units::percent_of(lb.launching_share_untraced) + ": not launch-bound");
    return;
  }
  const Verdict v = detail::launch_bound_verdict(lb);
  r.add_note(v.fires ? NoteLevel::kWarning : NoteLevel::kInfo, v.text());
}

}  // namespace

Report launch_overhead(Database& db) {
  Report r;
  r.name = "launch_overhead";
  r.title = "Kernel Launch Overhead";
  r.add_column("Launches", "", ColumnType::kInteger)
      .add_column("CPU Launch Time avg", "ns", ColumnType::kReal)
      .add_column("Tracer Cost avg", "ns", ColumnType::kReal)
      .add_column("GPU Time avg", "ns", ColumnType::kReal)
      .add_column("Queue Delay avg", "ns", ColumnType::kReal)
      .add_column("Queue Delay median", "ns", ColumnType::kReal)
      .add_column("Launch/GPU", "", ColumnType::kReal)
      .add_column("Name", "", ColumnType::kText);

  const std::vector<LaunchedKernel>& launched =
      detail::cached<std::vector<LaunchedKernel>>(db, "launched_kernels", [&] { return read_launched_kernels(db); });
  struct Group {
    std::string name;
    std::int64_t gpu_total = 0, launch_total = 0, queue_total = 0;
    std::vector<double> queue;
  };
  std::map<std::int64_t, Group> by_name;
  for (const LaunchedKernel& k : launched) {
    Group& g = by_name[k.name_id];
    core::add_span(g.gpu_total, k.end_ns, k.start_ns);
    core::add_span(g.launch_total, k.launch_end_ns, k.launch_start_ns);
    core::add_span(g.queue_total, k.start_ns, k.launch_end_ns);
    g.queue.push_back(static_cast<double>(core::sat_sub(k.start_ns, k.launch_end_ns)));
  }
  std::vector<Group*> order;
  for (auto& [id, g] : by_name) {
    g.name = string_or(db, id, "<unknown kernel>");
    order.push_back(&g);
  }
  // GPU time drives the row order (descending), then the name.
  std::sort(order.begin(), order.end(), [](const Group* a, const Group* b) {
    return a->gpu_total != b->gpu_total ? a->gpu_total > b->gpu_total : a->name < b->name;
  });
  const TracerCost cost = detail::tracer_cost(db);
  for (Group* g : order) {
    const double n = static_cast<double>(g->queue.size());
    const double gpu_avg = static_cast<double>(g->gpu_total) / n;
    const double launch_avg = static_cast<double>(g->launch_total) / n;
    r.rows.push_back(Row{static_cast<std::int64_t>(g->queue.size()), real_or_null(launch_avg),
                         cost.launch_ns ? real_or_null(*cost.launch_ns) : Cell{std::monostate{}}, real_or_null(gpu_avg),
                         real_or_null(static_cast<double>(g->queue_total) / n),
                         real_or_null(stats::median(std::move(g->queue))),
                         gpu_avg > 0 ? real_or_null(launch_avg / gpu_avg) : Cell{std::monostate{}}, g->name});
  }
  if (r.rows.empty()) {
    r.add_note(NoteLevel::kInfo, "no CUDA kernels with a launch call in the capture range");
    return r;
  }

  const std::int64_t unmatched =
      db.query_int("SELECT COUNT(*) FROM kernels").value_or(0) - static_cast<std::int64_t>(launched.size());
  if (unmatched > 0)
    r.add_note(NoteLevel::kWarning,
               std::to_string(unmatched) + " kernels have no launch call in the trace and are left out");

  const detail::LaunchBound lb = detail::launch_bound(db);
  r.add_note(NoteLevel::kInfo, "wall " + units::duration_ns(lb.wall_ns) + ", GPU idle " +
                                   units::duration_ns(lb.idle_ns) + ", CPU launching while the GPU was idle " +
                                   units::duration_ns(lb.launching_idle_ns) + " (launch-bound share " +
                                   units::percent_of(lb.launching_share) + ")");
  add_tracer_cost_note(r, lb, cost);
  add_graph_saving_note(r, lb);
  r.add_note(NoteLevel::kInfo,
             "Queue Delay = kernel start - launch call end, not clamped: negative means the kernel started "
             "before its launch call returned");
  // With call sites at every launch (--python-callsites=all): the lines whose launch calls took longest.
  if (db.query_int("SELECT EXISTS (SELECT 1 FROM api_calls WHERE py_stack_id IS NOT NULL)").value_or(0) != 0) {
    const std::string lines = python_sites_text(
        "the Python lines launching most:",
        python_site_totals(db,
                           "SELECT a.py_stack_id, a.duration_ns, a.name FROM v_api_calls a WHERE EXISTS (SELECT 1 "
                           "FROM kernels k WHERE k.pid = a.pid AND k.correlation_id = a.correlation_id)",
                           3),
        "the launch calls' time");
    if (!lines.empty()) r.add_note(NoteLevel::kInfo, lines);
  }
  add_verdict_note(r, lb);
  return r;
}

namespace {

double share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

bool is_launch_bound(double idle_share, double launching_share) {
  return idle_share >= kIdleShareForLaunchBound && launching_share >= kLaunchingShareOfIdle;
}

// |X ∩ W \ B| for a disjoint sorted union X: the time X covers while the GPU is idle
// (busy_in_wall = B ∩ W, w = W as a one-interval union).
std::int64_t idle_overlap_ns(const std::vector<Interval>& x, const std::vector<Interval>& w,
                             const std::vector<Interval>& busy_in_wall) {
  return overlap_ns(x, w) - overlap_ns(x, busy_in_wall);
}

// The launch calls (pid, correlation id) of `launched`, sorted, each once (a graph launch
// enqueues many kernels from one call).
std::vector<std::pair<std::int64_t, std::int64_t>> launch_call_ids(const std::vector<LaunchedKernel>& launched) {
  std::vector<std::pair<std::int64_t, std::int64_t>> ids;
  ids.reserve(launched.size());
  for (const LaunchedKernel& k : launched) ids.emplace_back(k.pid, k.correlation_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// Consecutive kernels on one stream where the GPU waited for the next launch, as traced
// and without cost_ns per gap (see the header).
struct GraphSaving {
  std::int64_t ns = 0, ns_untraced = 0, gaps = 0;
};

// Walks the kernels in (stream, start) order through an index, not a sorted copy of the
// (cached) kernels: 8 bytes per kernel instead of 72.
GraphSaving graph_saving(const std::vector<LaunchedKernel>& launched, std::int64_t cost_ns) {
  std::vector<std::size_t> order(launched.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&launched](std::size_t a, std::size_t b) {
    const LaunchedKernel& x = launched[a];
    const LaunchedKernel& y = launched[b];
    return std::tie(x.pid, x.device_id, x.stream_id, x.start_ns, x.end_ns) <
           std::tie(y.pid, y.device_id, y.stream_id, y.start_ns, y.end_ns);
  });
  GraphSaving out;
  const LaunchedKernel* prev = nullptr;
  std::int64_t prev_end = 0;
  for (const std::size_t i : order) {
    const LaunchedKernel& k = launched[i];
    const bool same = prev && prev->pid == k.pid && prev->device_id == k.device_id && prev->stream_id == k.stream_id;
    if (same && k.launch_end_ns > prev_end && k.start_ns > prev_end) {
      core::add_span(out.ns, k.start_ns, prev_end);
      out.ns_untraced =
          core::sat_add(out.ns_untraced, detail::gap_without_tracer_cost(core::sat_sub(k.start_ns, prev_end), cost_ns));
      ++out.gaps;
    }
    prev_end = same ? std::max(prev_end, k.end_ns) : k.end_ns;
    prev = &k;
  }
  return out;
}

// The shares and verdicts from the counts already filled in (see the header).
void derive_shares(detail::LaunchBound& lb) {
  lb.wall_ns_untraced = core::sat_sub(core::sat_sub(lb.wall_ns, lb.tracer_idle_ns), lb.torch_tracer_idle_ns);
  lb.idle_ns_untraced = core::sat_sub(core::sat_sub(lb.idle_ns, lb.tracer_idle_ns), lb.torch_tracer_idle_ns);
  lb.idle_share = share(lb.idle_ns, lb.wall_ns);
  lb.launching_share = share(lb.launching_idle_ns, lb.idle_ns);
  lb.idle_share_untraced = share(lb.idle_ns_untraced, lb.wall_ns_untraced);
  lb.launching_share_untraced = share(lb.launching_idle_ns_untraced, lb.idle_ns_untraced);
  lb.launch_bound = is_launch_bound(lb.idle_share_untraced, lb.launching_share_untraced);
  lb.launch_bound_only_with_tracer = !lb.launch_bound && is_launch_bound(lb.idle_share, lb.launching_share);
  lb.graph_saving_bound_ns = std::min(lb.graph_saving_ns_untraced, lb.idle_ns_untraced);
}

// B ∩ W: all GPUs' kernels, copies and memsets inside the wall span, disjoint and sorted.
std::vector<Interval> busy_in_wall(Database& db, const Interval& wall) {
  std::vector<Interval> out =
      read_intervals(db,
                     "SELECT start_ns, end_ns FROM kernels UNION ALL SELECT start_ns, end_ns FROM memcpys "
                     "UNION ALL SELECT start_ns, end_ns FROM memsets");
  for (Interval& b : out) b = {std::max(b.start_ns, wall.start_ns), std::min(b.end_ns, wall.end_ns)};
  return stats::interval_union(std::move(out));
}

// Synchronizing API calls (see the header) and syncs records, as (name, duration).
constexpr std::string_view kSyncWhere =
    " FROM v_api_calls WHERE name IN ('cudaDeviceSynchronize', "
    "'cudaStreamSynchronize', 'cudaEventSynchronize', 'cudaStreamWaitEvent', 'cuCtxSynchronize', "
    "'cuStreamSynchronize', 'cuEventSynchronize') OR ((name LIKE 'cudaMemcpy%' OR name LIKE 'cuMemcpy%') "
    "AND name NOT LIKE '%Async%')";

// The ends of the synchronizing calls the CPU waited in: started while the GPU was busy
// (cudaStreamWaitEvent is a wait of the GPU, not of the CPU). busy: disjoint and sorted.
std::vector<std::int64_t> waited_sync_ends(Database& db, const Interval& wall, const std::vector<Interval>& busy) {
  std::vector<std::int64_t> out;
  if (!db.has_table("api_calls")) return out;
  Statement st = db.prepare("SELECT start_ns, end_ns FROM (SELECT name, start_ns, end_ns" + std::string(kSyncWhere) +
                            ") WHERE name != 'cudaStreamWaitEvent' AND end_ns > ?1 AND start_ns < ?2");
  st.bind(1, wall.start_ns);
  st.bind(2, wall.end_ns);
  while (st.step()) {
    const std::int64_t start = st.column_int(0);
    auto it = std::upper_bound(busy.begin(), busy.end(), start,
                               [](std::int64_t v, const Interval& b) { return v < b.start_ns; });
    if (it != busy.begin() && std::prev(it)->end_ns > start) out.push_back(st.column_int(1));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// detail::launch_bound on kernels already read (see the header for the arithmetic).
detail::LaunchBound compute_launch_bound(Database& db, const std::vector<LaunchedKernel>& launched) {
  const TracerCost cost = detail::tracer_cost(db);
  const std::int64_t cost_ns = detail::whole_cost_ns(cost.launch_ns);
  const Interval wall = detail::wall_span(db);
  const std::vector<Interval> w = stats::interval_union({wall});
  const std::vector<Interval> busy = busy_in_wall(db, wall);
  std::vector<Interval> launch_calls;
  launch_calls.reserve(launched.size());
  for (const LaunchedKernel& k : launched) launch_calls.push_back({k.launch_start_ns, k.launch_end_ns});

  detail::LaunchBound out;
  out.tracer_cost_known = cost.launch_ns.has_value();
  out.tracer_launch_cost_ns = cost.launch_ns.value_or(0.0);
  out.wall_ns = stats::union_length(w);
  out.idle_ns = core::sat_sub(out.wall_ns, stats::union_length(busy));
  out.launching_idle_ns_untraced =
      idle_overlap_ns(stats::interval_union(detail::without_tracer_cost(launch_calls, cost_ns)), w, busy);
  out.launching_idle_ns = idle_overlap_ns(stats::interval_union(std::move(launch_calls)), w, busy);
  out.tracer_idle_ns = core::sat_sub(out.launching_idle_ns, out.launching_idle_ns_untraced);
  // P: the tracer's cost on the CPU's critical path (detail::critical_overhead_ns: every launch's,
  // every other recorded API call's and every recorded operator and module call's) beyond T, at most the idle time T
  // and the untraced launching leave.
  std::vector<detail::Overhead> overheads;
  detail::add_torch_overheads(db, "torch_ops", cost.torch_op_ns, wall, overheads);
  detail::add_torch_overheads(db, "torch_modules", cost.torch_module_ns, wall, overheads);
  const std::vector<std::pair<std::int64_t, std::int64_t>> launch_ids = launch_call_ids(launched);
  if (!overheads.empty()) {  // without the observer's costs P stays 0: T alone is taken out
    detail::add_api_overheads(db, cost.api_ns, wall, launch_ids, overheads);
    if (cost_ns > 0)
      for (const LaunchedKernel& k : launched)
        if (k.launch_start_ns >= wall.start_ns && k.launch_start_ns < wall.end_ns)
          overheads.push_back({k.launch_start_ns, static_cast<double>(cost_ns)});
    const std::int64_t critical =
        detail::critical_overhead_ns(std::move(overheads), wall, busy, waited_sync_ends(db, wall, busy));
    out.torch_tracer_idle_ns =
        std::min(core::sat_sub(critical, out.tracer_idle_ns),
                 core::sat_sub(core::sat_sub(out.idle_ns, out.tracer_idle_ns), out.launching_idle_ns_untraced));
  }
  out.launch_calls = static_cast<std::int64_t>(launch_ids.size());
  const GraphSaving saving = graph_saving(launched, cost_ns);
  out.graph_saving_ns = saving.ns;
  out.graph_saving_ns_untraced = saving.ns_untraced;
  out.graph_gaps = saving.gaps;
  derive_shares(out);
  return out;
}

}  // namespace

Verdict detail::launch_bound_verdict(const LaunchBound& lb) {
  Verdict v;
  v.name = "launch-bound";
  v.rule = "GPU idle >= " + units::percent_of(kIdleShareForLaunchBound) +
           " of the wall time and the CPU inside launch calls during >= " + units::percent_of(kLaunchingShareOfIdle) +
           " of that idle time, gpuscope's own launch cost taken out";
  v.fires = lb.launch_bound;
  v.evidence = untraced_lead(lb) + "the GPU was idle " + units::percent_of(lb.idle_share_untraced) +
               " of the wall time and the CPU was inside launch calls during " +
               units::percent_of(lb.launching_share_untraced) + " of that idle time (" +
               units::duration_ns(lb.launching_idle_ns_untraced) + ")";
  if (v.fires) {
    v.evidence += "; a CUDA graph could save up to " + units::duration_ns(lb.graph_saving_bound_ns) +
                  " (the gaps where the GPU waited for a launch, at most the idle time)";
  }
  v.advice =
      "try CUDA graphs or torch.compile(mode=\"reduce-overhead\"), and fewer, larger kernels (see launch_overhead)";
  return v;
}

std::string detail::untraced_lead(const LaunchBound& lb) {
  if (!lb.tracer_cost_known) return "";
  std::string torch;
  if (lb.torch_tracer_idle_ns > 0)
    torch = " and the " + units::duration_ns(lb.torch_tracer_idle_ns) +
            " more the GPU waited for while it recorded operator and module calls (their measured cost, "
            "counted where the CPU was on the critical path)";
  return "without gpuscope's own cost of " + units::ns_count(lb.tracer_launch_cost_ns) + " per launch" + torch + ", ";
}

detail::LaunchBound detail::launch_bound(Database& db) {
  return cached<LaunchBound>(db, "launch_bound", [&] {
    return compute_launch_bound(
        db, cached<std::vector<LaunchedKernel>>(db, "launched_kernels", [&] { return read_launched_kernels(db); }));
  });
}

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

  r.add_note(NoteLevel::kInfo, "total blocked: " + units::duration_ns(sb.blocked_ns) +
                                   " (union over threads and rows; an API call and its sync record count "
                                   "once), " +
                                   units::percent_of(sb.share) + " of the wall time");
  if (!sb.sites.empty())
    r.add_note(NoteLevel::kInfo, python_sites_text("the Python lines that waited longest:", sb.sites, "the wait"));
  const Verdict v = detail::sync_blocked_verdict(sb);
  r.add_note(v.fires ? NoteLevel::kWarning : NoteLevel::kInfo, v.text());
  return r;
}

namespace detail {
// Uncached; the cached front is below.
SyncBlocked compute_sync_blocked(store::Database& db);
}  // namespace detail

detail::SyncBlocked detail::compute_sync_blocked(Database& db) {
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
  const Interval wall = wall_span(db);
  out.idle_ns = core::sat_sub(out.wall_ns, stats::union_length(busy_in_wall(db, wall)));
  out.idle_share = out.wall_ns > 0 ? static_cast<double>(out.idle_ns) / static_cast<double>(out.wall_ns) : 0.0;
  out.sync_bound = out.share >= kBlockedShareForSyncBound && out.idle_share >= kIdleShareForLaunchBound;
  out.sites = python_site_totals(db, "SELECT py_stack_id, duration_ns, name" + std::string(kSyncWhere), 3);
  return out;
}

Verdict detail::sync_blocked_verdict(const SyncBlocked& sb) {
  Verdict v;
  v.name = "sync-blocked";
  v.rule = "the CPU blocked on the GPU >= " + units::percent_of(kBlockedShareForSyncBound) +
           " of the wall time while the GPU was idle >= " + units::percent_of(kIdleShareForLaunchBound) + " of it";
  v.fires = sb.sync_bound;
  v.evidence = "the CPU was blocked on the GPU " + units::percent_of(sb.share) + " of the wall time";
  if (!sb.calls.empty() && sb.share >= kBlockedShareForSyncBound) {
    v.evidence += ", mostly in " + sb.calls.front().key[0];
    if (!sb.sites.empty()) {
      const PySiteTotal& top = sb.sites.front();
      v.evidence += " (" + units::percent_of(top.share) + " of the wait at " + top.where() +
                    (top.call.empty() ? "" : ", in " + top.call) + ")";
    }
  }
  v.evidence += ", and the GPU was idle " + units::percent_of(sb.idle_share) + " of the wall time";
  if (!v.fires && sb.share >= kBlockedShareForSyncBound)
    v.evidence += ": the CPU waited while the GPU worked, which costs nothing";
  v.advice =
      "remove .item(), .cpu(), printing tensors and torch.cuda.synchronize() from the loop, and copy with "
      "non_blocking=True from pinned memory (see sync_wait)";
  return v;
}

detail::SyncBlocked detail::sync_blocked(Database& db) {
  return cached<SyncBlocked>(db, "sync_blocked", [&] { return compute_sync_blocked(db); });
}

}  // namespace gpuscope::analyze
