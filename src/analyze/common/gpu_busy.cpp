#include "analyze/common/gpu_busy.hpp"

#include <algorithm>

#include "core/saturating.hpp"
#include "analyze/common/event_budget.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze::detail {
namespace {

using store::Database;
using store::Statement;

struct Span {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool valid = false;
};

Span span_of(Database& db, const char* sql) {
  Statement st = db.prepare(sql);
  if (!st.step() || st.is_null(0) || st.is_null(1)) return {};
  return {st.column_int(0), st.column_int(1), true};
}

}  // namespace

stats::Interval wall_span(Database& db) {
  Span s = span_of(db, "SELECT MIN(start_ns), MAX(end_ns) FROM capture_windows");
  if (!s.valid) s = span_of(db, "SELECT MIN(start_ns), MAX(end_ns) FROM processes");
  if (!s.valid) {
    s = span_of(db,
                "SELECT MIN(s), MAX(e) FROM ("
                "SELECT start_ns AS s, end_ns AS e FROM kernels UNION ALL "
                "SELECT start_ns, end_ns FROM memcpys UNION ALL "
                "SELECT start_ns, end_ns FROM memsets UNION ALL "
                "SELECT start_ns, end_ns FROM api_calls UNION ALL "
                "SELECT start_ns, end_ns FROM syncs UNION ALL "
                "SELECT start_ns, COALESCE(end_ns, start_ns) FROM nvtx_events)");
  }
  return s.valid ? stats::Interval{s.start_ns, s.end_ns} : stats::Interval{0, 0};
}

std::int64_t wall_time_ns(Database& db) {
  const stats::Interval w = wall_span(db);
  return std::max<std::int64_t>(0, core::sat_sub(w.end_ns, w.start_ns));
}

std::map<std::int64_t, GpuBusy> busy_per_gpu(Database& db, const GpuIndexMap& gpus) {
  // Every GPU operation's span is held once, then its union: counted first (memory
  // budget: analyze/common/event_budget.hpp; peak bytes per operation measured on a 10M-event
  // trace, rounded up).
  constexpr std::int64_t kBytesPerOp = 60;
  check_event_budget({"GPU busy time (summary, gpu_util, top)", "kernels, memcpys and memsets",
                      db.query_int("SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpys) + "
                                   "(SELECT COUNT(*) FROM memsets)")
                          .value_or(0),
                      kBytesPerOp, ""});
  std::map<std::int64_t, std::vector<stats::Interval>> intervals;
  std::map<std::int64_t, GpuBusy> out;
  Statement st = db.prepare(
      "SELECT pid, device_id, start_ns, end_ns, 1 FROM kernels UNION ALL "
      "SELECT pid, device_id, start_ns, end_ns, 0 FROM memcpys UNION ALL "
      "SELECT pid, device_id, start_ns, end_ns, 0 FROM memsets");
  while (st.step()) {
    const std::int64_t gpu = gpus.index(st.column_int(0), st.column_int(1));
    intervals[gpu].push_back({st.column_int(2), st.column_int(3)});
    out[gpu].kernels += st.column_int(4);
  }
  for (auto& [gpu, iv] : intervals) {
    GpuBusy& b = out[gpu];
    b.busy = stats::interval_union(std::move(iv));
    for (const stats::Interval& i : b.busy) core::add_span(b.busy_ns, i.end_ns, i.start_ns);
  }

  Statement names = db.prepare("SELECT pid, device_id, name FROM devices WHERE name IS NOT NULL");
  while (names.step()) {
    const auto it = out.find(gpus.index(names.column_int(0), names.column_int(1)));
    if (it != out.end()) it->second.name = names.column_text(2);
  }
  return out;
}

}  // namespace gpuscope::analyze::detail
