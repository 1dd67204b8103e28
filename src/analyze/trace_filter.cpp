#include "analyze/trace_filter.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "analyze/gpu_busy.hpp"
#include "analyze/gpu_index.hpp"
#include "core/option_values.hpp"
#include "store/schema.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();

std::string num(std::int64_t v) { return std::to_string(v); }

std::string quoted(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += '\'';
    q += c;
  }
  return q + "'";
}

bool has_column(const store::TableDef& t, std::string_view column) {
  return std::any_of(t.columns.begin(), t.columns.end(),
                     [&](const store::ColumnDef& c) { return c.name == column; });
}

std::string column_list(const store::TableDef& t, std::string_view prefix = "") {
  std::string s;
  for (const store::ColumnDef& c : t.columns) s += (s.empty() ? "" : ", ") + std::string(prefix) + std::string(c.name);
  return s;
}

// The filter with absolute times, ready for SQL.
struct Plan {
  const TraceFilter& f;
  std::optional<std::int64_t> from_abs, to_abs;  // ns on the trace clock
  bool time() const { return from_abs || to_abs; }
  std::int64_t a() const { return from_abs.value_or(std::numeric_limits<std::int64_t>::min()); }
  std::int64_t b() const { return to_abs.value_or(kForever); }
};

// Containment of event e in the merged NVTX instances of its process. The merged
// intervals of one process are disjoint, so only the last one starting at or before
// the event can hold it: one index lookup per event.
std::string inside_ranges(std::string_view end_expr) {
  return "((SELECT r.end_ns FROM temp.gs_filter_ranges r WHERE r.pid = e.pid AND r.start_ns <= e.start_ns "
         "ORDER BY r.start_ns DESC LIMIT 1) >= " + std::string(end_expr) + ")";
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

// The WHERE clause that keeps a row of `t` (alias e); capture_windows and processes
// are clipped separately for a time window.
std::string keep_condition(const store::TableDef& t, const Plan& p) {
  std::vector<std::string> all;
  const std::string_view name = t.name;
  const bool pid = has_column(t, "pid");

  if (p.f.pid && pid) all.push_back("(e.pid IS NULL OR e.pid = " + num(*p.f.pid) + ")");

  if (p.f.gpu && pid) {
    if (is_gpu_op(name) || name == "devices") {
      all.emplace_back(kOnGpu);
    } else if (name == "api_calls" || name == "syncs") {
      all.push_back(std::string(kGpuPid) + " AND " + std::string(kNotForeign));
    } else {
      all.push_back("(e.pid IS NULL OR " + std::string(kGpuPid) + ")");
    }
  }

  if (p.time() && name != "capture_windows" && name != "processes") {
    const std::string a = num(p.a()), b = num(p.b());
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

  if (p.f.nvtx) {
    if (name == "api_calls") {
      all.push_back(inside_ranges("e.end_ns"));
    } else if (name == "nvtx_events") {
      all.push_back(inside_ranges("COALESCE(e.end_ns, e.start_ns)"));
    } else if (name == "syncs") {
      all.push_back("(" + std::string(kLaunchKept) + " OR " + inside_ranges("e.end_ns") + ")");
    } else if (is_gpu_op(name)) {
      all.emplace_back(kLaunchKept);
    } else if (name == "overheads") {
      all.emplace_back("EXISTS (SELECT 1 FROM temp.gs_filter_ranges r WHERE r.pid = e.pid AND "
                       "r.start_ns <= e.end_ns AND r.end_ns >= e.start_ns)");
    } else if (name == "messages") {
      all.emplace_back("EXISTS (SELECT 1 FROM temp.gs_filter_ranges r WHERE r.pid = e.pid AND "
                       "e.ts_ns BETWEEN r.start_ns AND r.end_ns)");
    } else if (name == "capture_windows") {
      all.emplace_back("0");  // replaced by the instances
    }
  }

  std::string where;
  for (const std::string& c : all) where += (where.empty() ? "" : " AND ") + c;
  return where.empty() ? "1" : where;
}

// Copies one table into the staging database, keeping the rows `keep_condition` keeps
// (time-clipping capture_windows and processes).
void copy_table(Database& db, const store::TableDef& t, const Plan& p) {
  // A trace written before a table existed (kernel_profiles, kernel_metrics) lacks it.
  if (db.query_int("SELECT COUNT(*) FROM src.sqlite_master WHERE type = 'table' AND name = '" + std::string(t.name) +
                   "'").value_or(0) == 0) {
    return;
  }
  std::string where = keep_condition(t, p);
  // Counter values follow their launch.
  if (t.name == "kernel_metrics") where += " AND e.profile_id IN (SELECT id FROM main.kernel_profiles)";
  std::string select = column_list(t, "e.");
  if (p.time() && (t.name == "capture_windows" || t.name == "processes")) {
    const std::string a = num(p.a()), b = num(p.b());
    const std::string clip_start = "MAX(e.start_ns, " + a + ")";
    const std::string clip_end = "MIN(COALESCE(e.end_ns, " + num(kForever) + "), " + b + ")";
    std::string cols;
    for (const store::ColumnDef& c : t.columns) {
      std::string expr = c.name == "start_ns" ? clip_start : c.name == "end_ns" ? clip_end : "e." + std::string(c.name);
      cols += (cols.empty() ? "" : ", ") + expr;
    }
    select = cols;
    db.exec("INSERT INTO main." + std::string(t.name) + " (" + column_list(t) + ") SELECT " + select + " FROM src." +
            std::string(t.name) + " e WHERE " + where + " AND COALESCE(e.start_ns, 0) <= " +
            b + " AND COALESCE(e.end_ns, " + num(kForever) + ") >= " + a);
    return;
  }
  db.exec("INSERT INTO main." + std::string(t.name) + " (" + column_list(t) + ") SELECT " + select + " FROM src." +
          std::string(t.name) + " e WHERE " + where);
}

struct Instance {
  std::int64_t pid = 0, start = 0, end = 0;
};

// The NVTX instances the filter names, in start order.
std::vector<Instance> find_instances(Database& db, const TraceFilter& f, std::int64_t trace_end) {
  const NvtxRangeFilter& n = *f.nvtx;
  std::string sql =
      "SELECT e.pid, e.start_ns, e.end_ns FROM nvtx_events e "
      "JOIN strings t ON t.id = e.text_id LEFT JOIN strings d ON d.id = e.domain_id "
      "WHERE COALESCE(e.style, '') <> 'Mark' AND t.value ";
  sql += n.name.find('*') != std::string::npos ? "GLOB ?1" : "= ?1";
  if (n.domain) sql += n.domain->empty() ? " AND e.domain_id IS NULL" : " AND d.value = ?2";
  if (f.pid) sql += " AND e.pid = " + num(*f.pid);
  sql += " ORDER BY e.start_ns, e.id";
  Statement st = db.prepare(sql);
  st.bind(1, std::string_view(n.name));
  if (n.domain && !n.domain->empty()) st.bind(2, std::string_view(*n.domain));
  std::vector<Instance> out;
  while (st.step()) {
    Instance i;
    i.pid = st.column_int(0);
    i.start = st.column_int(1);
    i.end = st.is_null(2) ? std::max(i.start, trace_end) : st.column_int(2);
    out.push_back(i);
  }
  if (n.instance) {
    if (*n.instance > static_cast<std::int64_t>(out.size())) return {};
    out = {out[static_cast<std::size_t>(*n.instance - 1)]};
  }
  return out;
}

// Temp tables the keep conditions read: the instances merged per process into
// disjoint closed intervals, and the (pid, correlation_id) of the API calls inside.
void build_nvtx_tables(Database& db, const std::vector<Instance>& instances) {
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> by_pid;
  for (const Instance& i : instances) by_pid[i.pid].push_back({i.start, i.end});
  db.exec("CREATE TEMP TABLE gs_filter_ranges (pid INTEGER, start_ns INTEGER, end_ns INTEGER, "
          "PRIMARY KEY (pid, start_ns)) WITHOUT ROWID");
  Statement ins = db.prepare("INSERT INTO temp.gs_filter_ranges VALUES (?, ?, ?)");
  for (auto& [pid, iv] : by_pid) {
    std::sort(iv.begin(), iv.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> merged;
    for (const auto& x : iv) {
      if (!merged.empty() && x.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, x.second);
      } else {
        merged.push_back(x);
      }
    }
    for (const auto& [s, e] : merged) {
      ins.bind(1, pid).bind(2, s).bind(3, e);
      ins.step();
      ins.rewind();
    }
  }
  db.exec("CREATE TEMP TABLE gs_filter_launch (pid INTEGER, corr INTEGER, PRIMARY KEY (pid, corr)) WITHOUT ROWID");
  db.exec("INSERT OR IGNORE INTO temp.gs_filter_launch SELECT e.pid, e.correlation_id FROM src.api_calls e "
          "WHERE e.correlation_id IS NOT NULL AND " + inside_ranges("e.end_ns"));
}

// The (pid, device_id) pairs of physical GPU `gpu`, and the correlations of GPU work
// on the other GPUs.
void build_gpu_tables(Database& db, Database& source, std::int64_t gpu) {
  const detail::GpuIndexMap map = detail::GpuIndexMap::load(source);
  db.exec("CREATE TEMP TABLE gs_filter_gpus (pid INTEGER, device_id INTEGER, PRIMARY KEY (pid, device_id)) "
          "WITHOUT ROWID");
  Statement pairs = source.prepare(
      "SELECT pid, device_id FROM devices UNION SELECT pid, device_id FROM kernels "
      "UNION SELECT pid, device_id FROM memcpys UNION SELECT pid, device_id FROM memsets");
  Statement ins = db.prepare("INSERT OR IGNORE INTO temp.gs_filter_gpus VALUES (?, ?)");
  while (pairs.step()) {
    if (pairs.is_null(0) || pairs.is_null(1)) continue;
    const std::int64_t pid = pairs.column_int(0), dev = pairs.column_int(1);
    if (map.index(pid, dev) != gpu) continue;
    ins.bind(1, pid).bind(2, dev);
    ins.step();
    ins.rewind();
  }
  db.exec("CREATE TEMP TABLE gs_filter_foreign (pid INTEGER, corr INTEGER, PRIMARY KEY (pid, corr)) WITHOUT ROWID");
  for (std::string_view t : {"kernels", "memcpys", "memsets"}) {
    db.exec("INSERT OR IGNORE INTO temp.gs_filter_foreign SELECT e.pid, e.correlation_id FROM src." +
            std::string(t) + " e WHERE e.correlation_id IS NOT NULL AND NOT " + std::string(kOnGpu));
  }
}

// Widens the earliest start and the latest end of `table` (capture_windows or
// processes in the staging database) to cover the kept events.
void widen_to_events(Database& db, std::string_view table) {
  const std::string s = "main";
  Statement span = db.prepare(
      "SELECT MIN(x), MAX(y) FROM (SELECT start_ns AS x, end_ns AS y FROM " + s + ".kernels UNION ALL "
      "SELECT start_ns, end_ns FROM " + s + ".memcpys UNION ALL SELECT start_ns, end_ns FROM " + s + ".memsets "
      "UNION ALL SELECT start_ns, end_ns FROM " + s + ".api_calls UNION ALL SELECT start_ns, end_ns FROM " + s +
      ".syncs)");
  if (!span.step() || span.is_null(0)) return;
  const std::string first = num(span.column_int(0)), last = num(span.column_int(1));
  const std::string t = s + "." + std::string(table);
  db.exec("UPDATE " + t + " SET start_ns = " + first + " WHERE start_ns > " + first +
          " AND rowid = (SELECT rowid FROM " + t + " ORDER BY start_ns LIMIT 1)");
  db.exec("UPDATE " + t + " SET end_ns = " + last + " WHERE end_ns < " + last + " AND rowid = (SELECT rowid FROM " +
          t + " ORDER BY end_ns DESC LIMIT 1)");
}

std::int64_t count(Database& db, const std::string& sql) { return db.query_int(sql).value_or(0); }

std::string seconds(std::int64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g s", static_cast<double>(ns) / 1e9);
  return buf;
}

// What the trace does contain, for a filter that matched nothing.
std::string nvtx_names_seen(Database& db) {
  Statement st = db.prepare(
      "SELECT t.value, d.value, COUNT(*) AS n FROM nvtx_events e JOIN strings t ON t.id = e.text_id "
      "LEFT JOIN strings d ON d.id = e.domain_id WHERE COALESCE(e.style, '') <> 'Mark' "
      "GROUP BY e.text_id, e.domain_id ORDER BY n DESC, t.value LIMIT 21");
  std::string s;
  int shown = 0;
  while (st.step()) {
    if (++shown > 20) {
      s += ", ...";
      break;
    }
    std::string name = st.column_text(0);
    if (!st.is_null(1)) name += "@" + st.column_text(1);
    s += (s.empty() ? "" : ", ") + quoted(name) + " (" + num(st.column_int(2)) + ")";
  }
  return s.empty() ? "the trace has no NVTX ranges (record with --trace=cuda,nvtx)" : "ranges seen: " + s;
}

std::string pids_seen(Database& db) {
  Statement st = db.prepare(
      "SELECT p.pid, (SELECT cmdline FROM processes q WHERE q.pid = p.pid) FROM (SELECT pid FROM processes "
      "UNION SELECT pid FROM api_calls UNION SELECT pid FROM kernels) p ORDER BY p.pid LIMIT 20");
  std::string s;
  while (st.step()) {
    s += (s.empty() ? "" : ", ") + num(st.column_int(0));
    if (!st.is_null(1)) s += " (" + st.column_text(1).substr(0, 60) + ")";
  }
  return s.empty() ? "the trace has no processes" : "processes: " + s;
}

std::string gpus_seen(Database& db) {
  const detail::GpuIndexMap map = detail::GpuIndexMap::load(db);
  std::map<std::int64_t, std::string> gpus;
  Statement st = db.prepare(
      "SELECT p.pid, p.device_id, (SELECT name FROM devices d WHERE d.pid = p.pid AND d.device_id = p.device_id) "
      "FROM (SELECT pid, device_id FROM devices UNION SELECT pid, device_id FROM kernels UNION "
      "SELECT pid, device_id FROM memcpys UNION SELECT pid, device_id FROM memsets) p");
  while (st.step()) {
    std::string& name = gpus[map.index(st.column_int(0), st.column_int(1))];
    if (name.empty() && !st.is_null(2)) name = st.column_text(2);
  }
  std::string s;
  for (const auto& [i, name] : gpus) s += (s.empty() ? "" : ", ") + num(i) + (name.empty() ? "" : " (" + name + ")");
  return s.empty() ? "the trace has no GPU activity" : "GPUs: " + s;
}

}  // namespace

NvtxRangeFilter parse_nvtx_filter(std::string_view text) {
  NvtxRangeFilter f;
  if (const auto slash = text.rfind('/'); slash != std::string_view::npos && slash + 1 < text.size() &&
                                          text.find_first_not_of("0123456789", slash + 1) == std::string_view::npos) {
    std::int64_t n = 0;
    const auto digits = text.substr(slash + 1);
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || n < 1)
      throw std::invalid_argument("--filter-nvtx '" + std::string(text) +
                                  "': the instance after '/' counts from 1 (e.g. 'step/3' for the third)");
    f.instance = n;
    text = text.substr(0, slash);
  }
  if (const auto at = text.rfind('@'); at != std::string_view::npos) {
    f.domain = std::string(text.substr(at + 1));
    text = text.substr(0, at);
  }
  if (text.empty())
    throw std::invalid_argument("--filter-nvtx needs a range name: RANGE, RANGE@DOMAIN or RANGE/N (e.g. 'train_step')");
  f.name = std::string(text);
  return f;
}

std::int64_t parse_trace_time(std::string_view text) {
  // The one duration grammar of the command line (core/option_values.hpp); a bare number is s.
  const core::OptionValue<std::int64_t> v =
      core::parse_duration_ns(text, core::DurationLimits{0, core::kMaxInt64, 1'000'000'000, "1.5, 2s or 250ms"});
  if (!v.ok()) throw std::invalid_argument(v.error);
  return *v.value;
}

FilteredTrace filter_trace(Database& source, const TraceFilter& filter) {
  Plan plan{filter, std::nullopt, std::nullopt};
  const stats::Interval wall = detail::wall_span(source);
  if (filter.from_ns && filter.to_ns && *filter.from_ns > *filter.to_ns)
    throw std::invalid_argument("--from " + seconds(*filter.from_ns) + " is after --to " + seconds(*filter.to_ns));
  if (filter.from_ns) plan.from_abs = wall.start_ns + *filter.from_ns;
  if (filter.to_ns) plan.to_abs = wall.start_ns + *filter.to_ns;

  // The copy: a fresh in-memory database with the schema's tables; the source
  // attached as "src"; the helper tables of the filters in its temp schema.
  Database db(":memory:", Database::Mode::kReadWriteCreate);
  db.exec(store::create_tables_sql());
  db.attach(source, "src");  // a file is attached; an in-memory trace (tests) is copied

  std::vector<std::string> warnings;
  std::vector<Instance> instances;
  if (filter.nvtx) {
    instances = find_instances(source, filter, wall.end_ns);
    if (instances.empty()) {
      const NvtxRangeFilter& n = *filter.nvtx;
      std::string what = quoted(n.name);
      if (n.domain) what += n.domain->empty() ? " in the default domain" : " in domain " + quoted(*n.domain);
      if (filter.pid) what += " in process " + num(*filter.pid);
      what = (n.instance ? "instance " + num(*n.instance) + " of NVTX range " : "NVTX range ") + what;
      warnings.push_back("--filter-nvtx: no " + what + " in the trace; " + nvtx_names_seen(source));
    }
    build_nvtx_tables(db, instances);
  }
  if (filter.gpu) build_gpu_tables(db, source, *filter.gpu);

  db.exec("BEGIN");
  for (const store::TableDef& t : store::tables()) copy_table(db, t, plan);
  if (filter.nvtx) {
    Statement ins = db.prepare("INSERT INTO main.capture_windows (pid, start_ns, end_ns, reason) VALUES (?, ?, ?, ?)");
    const std::string reason = "nvtx:" + filter.nvtx->name;
    for (const Instance& i : instances) {
      const std::int64_t s = std::max(i.start, plan.a()), e = std::min(i.end, plan.b());
      if (s > e) continue;
      ins.bind(1, i.pid).bind(2, s).bind(3, e).bind(4, std::string_view(reason));
      ins.step();
      ins.rewind();
    }
  }
  if (filter.nvtx || plan.time()) {
    widen_to_events(db, "capture_windows");
    widen_to_events(db, "processes");
  }
  db.exec("COMMIT");

  // Warnings: each filter that alone matches nothing, then the combination.
  if (filter.pid) {
    const std::string p = num(*filter.pid);
    if (count(source, "SELECT (SELECT COUNT(*) FROM processes WHERE pid = " + p + ") + (SELECT COUNT(*) FROM "
                      "api_calls WHERE pid = " + p + ") + (SELECT COUNT(*) FROM kernels WHERE pid = " + p + ")") == 0)
      warnings.push_back("--process: no process " + p + " in the trace; " + pids_seen(source));
  }
  if (filter.gpu && count(db, "SELECT COUNT(*) FROM temp.gs_filter_gpus") == 0)
    warnings.push_back("--device: no GPU " + num(*filter.gpu) + " in the trace; " + gpus_seen(source));
  const std::int64_t kept = count(db, "SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpys) + "
                                      "(SELECT COUNT(*) FROM memsets) + (SELECT COUNT(*) FROM api_calls) + "
                                      "(SELECT COUNT(*) FROM nvtx_events)");
  if (kept == 0 && warnings.empty()) {
    if (plan.time()) {
      warnings.push_back("--from/--to: no events in [" + seconds(filter.from_ns.value_or(0)) + ", " +
                         (filter.to_ns ? seconds(*filter.to_ns) : std::string("end")) +
                         "] since the start of the trace, which lasts " + seconds(wall.end_ns - wall.start_ns));
    } else {
      warnings.push_back("the filters together keep no events");
    }
  }

  for (const char* t : {"gs_filter_ranges", "gs_filter_launch", "gs_filter_gpus", "gs_filter_foreign"})
    db.exec("DROP TABLE IF EXISTS temp." + std::string(t));
  db.exec("DETACH DATABASE src");
  db.exec(store::create_indexes_sql());
  return FilteredTrace{std::move(db), std::move(warnings)};
}

}  // namespace gpuscope::analyze
