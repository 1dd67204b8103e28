#include "analyze/nsys/nvtx_gpu_proj.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/saturating.hpp"
#include "analyze/common/event_budget.hpp"
#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/common/report_text.hpp"
#include "core/stats.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using stats::Interval;
using store::Database;
using store::Statement;

using Thread = std::pair<std::int64_t, std::int64_t>;  // pid, tid

// A GPU operation with the start of its launch call.
struct Op {
  std::int64_t call_start_ns = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool kernel = false;
};

struct Ops {
  std::map<Thread, std::vector<Op>> by_thread;  // sorted by call start
  std::int64_t total = 0;
  std::int64_t without_call = 0;
};

// Peak memory per GPU operation (bytes; analyze/common/event_budget.hpp), measured on a
// 10M-event trace and rounded up.
constexpr std::int64_t kBytesPerOp = 100;

// Every GPU operation with its launch call (same pid and correlation_id; the first to
// start when several share them), joined in SQL so that only the operations are held,
// not every API call.
Ops gpu_ops(Database& db) {
  check_event_budget({"nvtx_gpu_proj_sum", "kernels, memcpys and memsets",
                      db.query_int("SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpys) + "
                                   "(SELECT COUNT(*) FROM memsets)")
                          .value_or(0),
                      kBytesPerOp, ""});
  Ops out;
  Statement st = db.prepare(
      "SELECT g.pid, a.id, a.tid, a.start_ns, g.start_ns, g.end_ns, g.kernel FROM ("
      "SELECT pid, correlation_id, start_ns, end_ns, 1 AS kernel FROM kernels UNION ALL "
      "SELECT pid, correlation_id, start_ns, end_ns, 0 FROM memcpys UNION ALL "
      "SELECT pid, correlation_id, start_ns, end_ns, 0 FROM memsets) g "
      "LEFT JOIN api_calls a ON a.id = (SELECT b.id FROM api_calls b WHERE b.pid = g.pid AND "
      "b.correlation_id = g.correlation_id ORDER BY b.start_ns LIMIT 1)");
  while (st.step()) {
    ++out.total;
    if (st.is_null(1)) {
      ++out.without_call;
      continue;
    }
    out.by_thread[{st.column_int(0), st.column_int(2)}].push_back(
        Op{st.column_int(3), st.column_int(4), st.column_int(5), st.column_int(6) != 0});
  }
  for (auto& [thread, ops] : out.by_thread)
    std::stable_sort(ops.begin(), ops.end(),
                     [](const Op& a, const Op& b) { return a.call_start_ns < b.call_start_ns; });
  return out;
}

struct Group {
  std::vector<std::int64_t> proj;  // per instance
  std::int64_t range_ns = 0, ops = 0, kernel_ns = 0;
};

}  // namespace

Report nvtx_gpu_proj_sum(Database& db) {
  Report r;
  r.name = "nvtx_gpu_proj_sum";
  r.title = "NVTX GPU Projection Summary";
  r.add_column("Range", "", ColumnType::kText)
      .add_column("Style", "", ColumnType::kText)
      .add_column("Total Proj Time", "ns", ColumnType::kInteger)
      .add_column("Total Range Time", "ns", ColumnType::kInteger)
      .add_column("Range Instances", "", ColumnType::kInteger)
      .add_column("Proj Avg", "ns", ColumnType::kReal)
      .add_column("Proj Med", "ns", ColumnType::kReal)
      .add_column("Proj Min", "ns", ColumnType::kInteger)
      .add_column("Proj Max", "ns", ColumnType::kInteger)
      .add_column("Proj StdDev", "ns", ColumnType::kReal)
      .add_column("Total GPU Ops", "", ColumnType::kInteger)
      .add_column("Avg GPU Ops", "", ColumnType::kReal)
      .add_column("Total Kernel Time", "ns", ColumnType::kInteger);

  const Ops ops = gpu_ops(db);
  std::map<std::pair<std::string, std::string>, Group> groups;  // (range, style)
  std::int64_t cross_thread = 0;
  Statement st = db.prepare(
      "SELECT pid, tid, end_tid, start_ns, end_ns, COALESCE(style, ''), " + std::string(detail::kNvtxRangeNameSql) +
      " FROM v_nvtx WHERE style IS NOT 'Mark' AND end_ns IS NOT NULL" + detail::user_nvtx_only_sql(db));
  std::vector<Interval> intervals;
  std::set<Thread> range_threads;
  while (st.step()) {
    const Thread thread{st.column_int(0), st.column_int(1)};
    if (!st.is_null(2) && st.column_int(2) != thread.second) {
      ++cross_thread;
      continue;
    }
    range_threads.insert(thread);
    const auto it = ops.by_thread.find(thread);
    if (it == ops.by_thread.end()) continue;
    const std::int64_t start = st.column_int(3), end = st.column_int(4);
    const std::vector<Op>& on_thread = it->second;
    auto op = std::lower_bound(on_thread.begin(), on_thread.end(), start,
                               [](const Op& o, std::int64_t t) { return o.call_start_ns < t; });
    intervals.clear();
    std::int64_t count = 0, kernel_ns = 0;
    for (; op != on_thread.end() && op->call_start_ns < end; ++op) {
      ++count;
      intervals.push_back({op->start_ns, op->end_ns});
      if (op->kernel) core::add_span(kernel_ns, op->end_ns, op->start_ns);
    }
    if (count == 0) continue;
    Group& g = groups[{st.column_text(6), st.column_text(5)}];
    g.proj.push_back(stats::union_length(intervals));
    core::add_span(g.range_ns, end, start);
    g.ops += count;
    g.kernel_ns = core::sat_add(g.kernel_ns, kernel_ns);
  }

  struct Sorted {
    const std::pair<std::string, std::string>* key;
    const Group* group;
    std::int64_t total;
  };
  std::vector<Sorted> sorted;
  for (const auto& [key, g] : groups) {
    std::int64_t total = 0;
    for (std::int64_t p : g.proj) total += p;
    sorted.push_back({&key, &g, total});
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const Sorted& a, const Sorted& b) { return a.total > b.total; });
  for (const Sorted& s : sorted) {
    const Group& g = *s.group;
    const std::vector<double> proj(g.proj.begin(), g.proj.end());
    const auto [mn, mx] = std::minmax_element(g.proj.begin(), g.proj.end());
    const auto instances = static_cast<std::int64_t>(g.proj.size());
    r.rows.push_back(Row{s.key->first, s.key->second, s.total, g.range_ns, instances,
                         detail::real_or_null(stats::mean(proj)), detail::real_or_null(stats::median(proj)), *mn, *mx,
                         detail::real_or_null(stats::stddev(proj)), g.ops,
                         static_cast<double>(g.ops) / static_cast<double>(instances), g.kernel_ns});
  }

  if (r.rows.empty()) {
    r.add_note(NoteLevel::kInfo, ops.total == 0 ? "no GPU activity in the capture range"
                                                : "no NVTX ranges with GPU operations in the capture range");
  }
  if (ops.without_call > 0) {
    r.add_note(NoteLevel::kInfo, std::to_string(ops.without_call) + " of " + std::to_string(ops.total) +
                                     " GPU operations have no launch call in the trace and belong to no range");
  }
  std::int64_t other_threads = 0;
  for (const auto& [thread, on_thread] : ops.by_thread)
    if (!range_threads.contains(thread)) other_threads += static_cast<std::int64_t>(on_thread.size());
  if (!r.rows.empty() && other_threads > 0) {
    r.add_note(NoteLevel::kInfo, std::to_string(other_threads) + " of " + std::to_string(ops.total) +
                                     " GPU operations were launched from threads without NVTX ranges and belong "
                                     "to no range (PyTorch launches the backward pass from its autograd thread)");
  }
  if (cross_thread > 0) {
    r.add_note(NoteLevel::kInfo, std::to_string(cross_thread) +
                                     " ranges end on another thread than they started on and are left out (as nsys)");
  }
  return r;
}

}  // namespace gpuscope::analyze
