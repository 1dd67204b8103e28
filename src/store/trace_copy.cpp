#include "store/trace_copy.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "store/row_writer.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {
namespace {

constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();

std::string num(std::int64_t v) { return std::to_string(v); }

bool has_column(const TableDef& t, std::string_view column) {
  return std::any_of(t.columns.begin(), t.columns.end(), [&](const ColumnDef& c) { return c.name == column; });
}

std::string column_list(const TableDef& t, std::string_view prefix = "") {
  std::string s;
  for (const ColumnDef& c : t.columns) s += (s.empty() ? "" : ", ") + std::string(prefix) + std::string(c.name);
  return s;
}

struct Window {
  bool set = false;
  std::int64_t a = std::numeric_limits<std::int64_t>::min();
  std::int64_t b = kForever;
};

// Containment of event e in the merged intervals of its process. The merged intervals of
// one process are disjoint, so only the last one starting at or before the event can
// hold it: one index lookup per event.
std::string inside_ranges(std::string_view end_expr) {
  return "((SELECT r.end_ns FROM temp.gs_filter_ranges r WHERE r.pid = e.pid AND r.start_ns <= e.start_ns "
         "ORDER BY r.start_ns DESC LIMIT 1) >= " +
         std::string(end_expr) + ")";
}

constexpr std::string_view kLaunchKept =
    "EXISTS (SELECT 1 FROM temp.gs_filter_launch l WHERE l.pid = e.pid AND l.corr = e.correlation_id)";
constexpr std::string_view kOnGpu =
    "EXISTS (SELECT 1 FROM temp.gs_filter_gpus g WHERE g.pid = e.pid AND g.device_id = e.device_id)";
constexpr std::string_view kGpuPid = "e.pid IN (SELECT pid FROM temp.gs_filter_gpus)";
constexpr std::string_view kNotForeign =
    "NOT EXISTS (SELECT 1 FROM temp.gs_filter_foreign x WHERE x.pid = e.pid AND x.corr = e.correlation_id)";

bool is_gpu_op(std::string_view table) {
  return table == "kernels" || table == "memcpys" || table == "memsets" || table == "kernel_profiles";
}

// The WHERE clause that keeps a row of `t` (alias e); capture_windows and processes are
// clipped separately for a time window.
std::string keep_condition(const TableDef& t, const TraceCopyFilter& f, const Window& w) {
  std::vector<std::string> all;
  const std::string_view name = t.name;
  const bool pid = has_column(t, "pid");

  if (f.pid && pid) all.push_back("(e.pid IS NULL OR e.pid = " + num(*f.pid) + ")");

  if (f.devices && pid) {
    if (is_gpu_op(name) || name == "devices" || name == "memory_events") {
      all.emplace_back(kOnGpu);
    } else if (name == "api_calls" || name == "syncs") {
      all.push_back(std::string(kGpuPid) + " AND " + std::string(kNotForeign));
    } else {
      all.push_back("(e.pid IS NULL OR " + std::string(kGpuPid) + ")");
    }
  }

  // GPU metrics have no pid: a device filter keeps the GPUs whose UUID is one of its devices'.
  if (f.devices && (name == "gpu_metrics" || name == "gpu_metrics_sessions")) {
    all.emplace_back("e.device_id IN (SELECT device_id FROM temp.gs_filter_metric_devices)");
  }

  if (w.set && name != "capture_windows" && name != "processes") {
    const std::string a = num(w.a), b = num(w.b);
    if (name == "nvtx_events") {
      all.push_back("(e.start_ns <= " + b + " AND COALESCE(e.end_ns, CASE WHEN e.style = 'Mark' THEN e.start_ns ELSE " +
                    num(kForever) + " END) >= " + a + ")");
    } else if (has_column(t, "start_ns") && has_column(t, "end_ns")) {
      all.push_back("(e.start_ns <= " + b + " AND e.end_ns >= " + a + ")");
    } else if (has_column(t, "ts_ns")) {
      all.push_back("(e.ts_ns BETWEEN " + a + " AND " + b + ")");
    } else if (has_column(t, "launch_ns")) {
      all.push_back("(e.launch_ns BETWEEN " + a + " AND " + b + ")");
    }
  }

  if (f.ranges) {
    if (name == "api_calls") {
      all.push_back(inside_ranges("e.end_ns"));
    } else if (name == "nvtx_events") {
      all.push_back(inside_ranges("COALESCE(e.end_ns, e.start_ns)"));
    } else if (name == "syncs") {
      all.push_back("(" + std::string(kLaunchKept) + " OR " + inside_ranges("e.end_ns") + ")");
    } else if (is_gpu_op(name)) {
      all.emplace_back(kLaunchKept);
    } else if (name == "memory_events") {
      all.push_back("(" + std::string(kLaunchKept) +
                    " OR EXISTS (SELECT 1 FROM temp.gs_filter_ranges r WHERE r.pid = e.pid AND "
                    "e.ts_ns BETWEEN r.start_ns AND r.end_ns))");
    } else if (name == "overheads") {
      all.emplace_back(
          "EXISTS (SELECT 1 FROM temp.gs_filter_ranges r WHERE r.pid = e.pid AND "
          "r.start_ns <= e.end_ns AND r.end_ns >= e.start_ns)");
    } else if (name == "messages" || name == "py_samples") {
      all.emplace_back(
          "EXISTS (SELECT 1 FROM temp.gs_filter_ranges r WHERE r.pid = e.pid AND "
          "e.ts_ns BETWEEN r.start_ns AND r.end_ns)");
    } else if (name == "gpu_metrics") {
      // Samples overlapping an interval of any process (the GPU is shared): the last merged
      // interval starting at or before the sample's end is the only candidate.
      all.emplace_back(
          "((SELECT r.end_ns FROM temp.gs_filter_all_ranges r WHERE r.start_ns <= e.end_ns "
          "ORDER BY r.start_ns DESC LIMIT 1) >= e.start_ns)");
    } else if (name == "capture_windows") {
      all.emplace_back("0");  // the caller gives the windows
    }
  }

  std::string where;
  for (const std::string& c : all) where += (where.empty() ? "" : " AND ") + c;
  return where.empty() ? "1" : where;
}

// Copies one table from schema src into main, keeping the rows `keep_condition` keeps
// (time-clipping capture_windows and processes).
void copy_table(Database& db, const TableDef& t, const TraceCopyFilter& f, const Window& w) {
  // A trace written before a table existed (kernel_profiles, kernel_metrics) lacks it.
  if (db.query_int("SELECT COUNT(*) FROM src.sqlite_master WHERE type = 'table' AND name = '" + std::string(t.name) +
                   "'")
          .value_or(0) == 0) {
    return;
  }
  std::string where = keep_condition(t, f, w);
  // Counter values follow their launch.
  if (t.name == "kernel_metrics") where += " AND e.profile_id IN (SELECT id FROM main.kernel_profiles)";
  const std::string into = "INSERT INTO main." + std::string(t.name) + " (" + column_list(t) + ") SELECT ";
  const std::string from = " FROM src." + std::string(t.name) + " e WHERE " + where;
  if (w.set && (t.name == "capture_windows" || t.name == "processes")) {
    const std::string a = num(w.a), b = num(w.b);
    const std::string clip_start = "MAX(e.start_ns, " + a + ")";
    const std::string clip_end = "MIN(COALESCE(e.end_ns, " + num(kForever) + "), " + b + ")";
    std::string cols;
    for (const ColumnDef& c : t.columns) {
      std::string expr = c.name == "start_ns" ? clip_start : c.name == "end_ns" ? clip_end : "e." + std::string(c.name);
      cols += (cols.empty() ? "" : ", ") + expr;
    }
    db.exec(into + cols + from + " AND COALESCE(e.start_ns, 0) <= " + b + " AND COALESCE(e.end_ns, " + num(kForever) +
            ") >= " + a);
    return;
  }
  db.exec(into + column_list(t, "e.") + from);
}

// Temp tables the keep conditions read: the intervals merged per process into disjoint
// closed intervals, and the (pid, correlation_id) of the API calls inside.
void build_range_tables(Database& db, const std::vector<PidInterval>& ranges) {
  using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;
  auto merge = [](Intervals iv) {
    std::sort(iv.begin(), iv.end());
    Intervals merged;
    for (const auto& x : iv) {
      if (!merged.empty() && x.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, x.second);
      } else {
        merged.push_back(x);
      }
    }
    return merged;
  };
  std::map<std::int64_t, Intervals> by_pid;
  Intervals every;  // all processes together, for gpu_metrics
  for (const PidInterval& i : ranges) {
    by_pid[i.pid].push_back({i.start_ns, i.end_ns});
    every.push_back({i.start_ns, i.end_ns});
  }
  db.exec(
      "CREATE TEMP TABLE gs_filter_ranges (pid INTEGER, start_ns INTEGER, end_ns INTEGER, "
      "PRIMARY KEY (pid, start_ns)) WITHOUT ROWID");
  Statement ins = db.prepare("INSERT INTO temp.gs_filter_ranges VALUES (?, ?, ?)");
  for (auto& [pid, iv] : by_pid) {
    for (const auto& [s, e] : merge(std::move(iv))) {
      ins.bind(1, pid).bind(2, s).bind(3, e);
      ins.step();
      ins.rewind();
    }
  }
  db.exec("CREATE TEMP TABLE gs_filter_all_ranges (start_ns INTEGER PRIMARY KEY, end_ns INTEGER) WITHOUT ROWID");
  Statement all = db.prepare("INSERT INTO temp.gs_filter_all_ranges VALUES (?, ?)");
  for (const auto& [s, e] : merge(std::move(every))) {
    all.bind(1, s).bind(2, e);
    all.step();
    all.rewind();
  }
  db.exec("CREATE TEMP TABLE gs_filter_launch (pid INTEGER, corr INTEGER, PRIMARY KEY (pid, corr)) WITHOUT ROWID");
  db.exec(
      "INSERT OR IGNORE INTO temp.gs_filter_launch SELECT e.pid, e.correlation_id FROM src.api_calls e "
      "WHERE e.correlation_id IS NOT NULL AND " +
      inside_ranges("e.end_ns"));
}

// The (pid, device_id) pairs kept, and the correlations of GPU work on the other devices.
void build_device_tables(Database& db, const std::vector<PidDevice>& devices) {
  db.exec(
      "CREATE TEMP TABLE gs_filter_gpus (pid INTEGER, device_id INTEGER, PRIMARY KEY (pid, device_id)) "
      "WITHOUT ROWID");
  Statement ins = db.prepare("INSERT OR IGNORE INTO temp.gs_filter_gpus VALUES (?, ?)");
  for (const PidDevice& d : devices) {
    ins.bind(1, d.pid).bind(2, d.device_id);
    ins.step();
    ins.rewind();
  }
  db.exec("CREATE TEMP TABLE gs_filter_foreign (pid INTEGER, corr INTEGER, PRIMARY KEY (pid, corr)) WITHOUT ROWID");
  for (std::string_view t : {"kernels", "memcpys", "memsets"}) {
    db.exec("INSERT OR IGNORE INTO temp.gs_filter_foreign SELECT e.pid, e.correlation_id FROM src." + std::string(t) +
            " e WHERE e.correlation_id IS NOT NULL AND NOT " + std::string(kOnGpu));
  }
  // gpu_metrics.device_id of the GPUs sampled whose UUID is that of a kept (pid, device_id).
  db.exec("CREATE TEMP TABLE gs_filter_metric_devices (device_id INTEGER PRIMARY KEY)");
  if (db.query_int("SELECT COUNT(*) FROM src.sqlite_master WHERE type = 'table' AND name = 'gpu_metrics_sessions'")
          .value_or(0) > 0) {
    db.exec(
        "INSERT OR IGNORE INTO temp.gs_filter_metric_devices SELECT s.device_id FROM src.gpu_metrics_sessions s "
        "WHERE s.uuid IS NOT NULL AND EXISTS (SELECT 1 FROM temp.gs_filter_gpus g JOIN src.devices d "
        "ON d.pid = g.pid AND d.device_id = g.device_id WHERE d.uuid = s.uuid)");
  }
}

// Widens the earliest start and the latest end of `table` (capture_windows or processes
// of the copy) to cover the kept events.
void widen_to_events(Database& db, std::string_view table) {
  Statement span = db.prepare(
      "SELECT MIN(x), MAX(y) FROM (SELECT start_ns AS x, end_ns AS y FROM main.kernels UNION ALL "
      "SELECT start_ns, end_ns FROM main.memcpys UNION ALL SELECT start_ns, end_ns FROM main.memsets "
      "UNION ALL SELECT start_ns, end_ns FROM main.api_calls UNION ALL SELECT start_ns, end_ns FROM main.syncs)");
  if (!span.step() || span.is_null(0)) return;
  const std::string first = num(span.column_int(0)), last = num(span.column_int(1));
  const std::string t = "main." + std::string(table);
  db.exec("UPDATE " + t + " SET start_ns = " + first + " WHERE start_ns > " + first +
          " AND rowid = (SELECT rowid FROM " + t + " ORDER BY start_ns LIMIT 1)");
  db.exec("UPDATE " + t + " SET end_ns = " + last + " WHERE end_ns < " + last + " AND rowid = (SELECT rowid FROM " + t +
          " ORDER BY end_ns DESC LIMIT 1)");
}

}  // namespace

Database copy_trace(Database& source, const TraceCopyFilter& filter) {
  Window w;
  w.set = filter.from_ns || filter.to_ns;
  if (filter.from_ns) w.a = *filter.from_ns;
  if (filter.to_ns) w.b = *filter.to_ns;

  // A fresh in-memory database with the schema's tables; the source attached as "src";
  // the helper tables of the filters in its temp schema.
  Database db(":memory:", Database::Mode::kReadWriteCreate);
  db.exec(create_tables_sql());
  db.attach(source, "src");  // a file is attached; an in-memory trace (tests) is copied
  if (filter.ranges) build_range_tables(db, *filter.ranges);
  if (filter.devices) build_device_tables(db, *filter.devices);

  db.exec("BEGIN");
  for (const TableDef& t : tables()) copy_table(db, t, filter, w);
  if (!filter.capture_windows.empty()) {
    RowWriter<rows::CaptureWindow> windows(db);
    for (const rows::CaptureWindow& cw : filter.capture_windows) windows.insert(cw);
  }
  if (filter.widen_spans) {
    widen_to_events(db, "capture_windows");
    widen_to_events(db, "processes");
  }
  db.exec("COMMIT");

  for (const char* t : {"gs_filter_ranges", "gs_filter_all_ranges", "gs_filter_launch", "gs_filter_gpus",
                        "gs_filter_foreign", "gs_filter_metric_devices"})
    db.exec("DROP TABLE IF EXISTS temp." + std::string(t));
  db.exec("DETACH DATABASE src");
  db.exec(create_indexes_sql());
  return db;
}

}  // namespace gpuscope::store
