#include "analyze/nsys/nsys_reports.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "core/saturating.hpp"
#include "analyze/common/event_budget.hpp"
#include "analyze/nsys/trace_summary.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

using Key = std::vector<std::string>;

// One group of events: its key cells and one value per event (ns or bytes).
using Group = detail::ValueGroup;

using detail::Rekey;

// How one summary report looks: its value unit and the names of its columns.
struct SummaryShape {
  const char* name;
  const char* title;
  bool in_mb;              // values are bytes shown in MB; otherwise durations in ns
  const char* count_name;  // "Num Calls", "Instances", "Count"
  std::vector<const char*> key_names;
  const char* empty_what;  // "CUDA API calls" → note "no CUDA API calls in the capture range"
};

constexpr double kBytesPerMb = 1e6;

Cell real_or_null(double v) { return std::isnan(v) ? Cell{std::monostate{}} : Cell{v}; }

// The one builder behind all five reports: columns, one row per group, the empty note.
Report summarize(const SummaryShape& shape, const std::vector<Group>& groups) {
  Report r;
  r.name = shape.name;
  r.title = shape.title;
  const std::string unit = shape.in_mb ? "MB" : "ns";
  const ColumnType extreme_type = shape.in_mb ? ColumnType::kReal : ColumnType::kInteger;
  if (!shape.in_mb) r.add_column("Time", "%", ColumnType::kReal);
  r.add_column(shape.in_mb ? "Total" : "Total Time", unit, extreme_type)
      .add_column(shape.count_name, "", ColumnType::kInteger)
      .add_column("Avg", unit, ColumnType::kReal)
      .add_column("Med", unit, ColumnType::kReal)
      .add_column("Min", unit, extreme_type)
      .add_column("Max", unit, extreme_type)
      .add_column("StdDev", unit, ColumnType::kReal);
  for (const char* k : shape.key_names) r.add_column(k, "", ColumnType::kText);

  std::int64_t grand_total = 0;
  for (const Group& g : groups) grand_total = core::sat_add(grand_total, g.total);
  const double scale = shape.in_mb ? 1.0 / kBytesPerMb : 1.0;
  // Integers stay exact in ns; sizes become MB reals.
  auto amount = [&](std::int64_t v) -> Cell {
    if (shape.in_mb) return static_cast<double>(v) * scale;
    return v;
  };

  for (const Group& g : groups) {
    std::vector<double> v(g.values.begin(), g.values.end());
    const auto [mn, mx] = std::minmax_element(g.values.begin(), g.values.end());
    Row row{amount(g.total),
            static_cast<std::int64_t>(g.values.size()),
            real_or_null(stats::mean(v) * scale),
            real_or_null(stats::median(v) * scale),
            amount(*mn),
            amount(*mx),
            real_or_null(stats::stddev(v) * scale)};
    if (!shape.in_mb) {
      row.insert(row.begin(), grand_total > 0
                                  ? Cell{static_cast<double>(g.total) / static_cast<double>(grand_total) * 100.0}
                                  : Cell{std::monostate{}});
    }
    for (const std::string& k : g.key) row.push_back(k);
    r.rows.push_back(std::move(row));
  }
  if (groups.empty()) r.add_note(NoteLevel::kInfo, std::string("no ") + shape.empty_what + " in the capture range");
  return r;
}

// Memcpys by copy kind and memsets; the key is the nsys operation name.
constexpr std::string_view kMemoryOpsSql =
    "SELECT COALESCE(copy_kind, 'unknown'), %VALUE% FROM memcpys UNION ALL "
    "SELECT 'memset', %VALUE% FROM memsets";

std::string memory_ops_sql(std::string_view value_sql) {
  std::string sql(kMemoryOpsSql);
  for (auto pos = sql.find("%VALUE%"); pos != std::string::npos; pos = sql.find("%VALUE%"))
    sql.replace(pos, 7, value_sql);
  return sql;
}

// The nsys operation name of a memory-operation key cell (a copy kind or "memset").
std::string memory_operation_name(const std::string& kind) {
  return kind == "memset" ? std::string("[CUDA memset]") : memcpy_operation_name(kind);
}

std::vector<Group> memory_groups(Database& db, std::string_view value_sql) {
  return detail::group_values_by_key(db, memory_ops_sql(value_sql), [](Key k) {
    k[0] = memory_operation_name(k[0]);
    return k;
  });
}

// Appends one row per result row of `sql`, read by the report's column types (NULL
// stays NULL). `sql` may have more columns than the report; the extra ones are ignored.
template <typename Fix>
void append_rows(Report& r, Database& db, const std::string& sql, Fix&& fix) {
  Statement st = db.prepare(sql);
  while (st.step()) {
    Row row;
    for (std::size_t c = 0; c < r.columns.size(); ++c) {
      const int i = static_cast<int>(c);
      if (st.is_null(i)) {
        row.emplace_back(std::monostate{});
        continue;
      }
      switch (r.columns[c].type) {
        case ColumnType::kInteger:
          row.emplace_back(st.column_int(i));
          break;
        case ColumnType::kReal:
          row.emplace_back(st.column_double(i));
          break;
        case ColumnType::kText:
          row.emplace_back(st.column_text(i));
          break;
      }
    }
    fix(row, st);
    r.rows.push_back(std::move(row));
  }
}

// Peak memory per row of the per-event reports, rendered (the costliest format, json), in
// bytes, measured on a 10M-event trace and rounded up (docs/performance.md, "Big traces").
constexpr std::int64_t kGpuTraceRowBytes = 3000;
constexpr std::int64_t kApiTraceRowBytes = 1200;

constexpr std::string_view kTraceReportAdvice =
    "take the first rows in time order: --top N (without --sort); every event, in bounded memory: "
    "gpuscope export (Perfetto JSON, written as it is read) or SQL on the trace file "
    "(sqlite3 TRACE.sqlite 'SELECT * FROM v_kernels', docs/trace-schema.md)";

// The rows a per-event report will hold: all of them, or the first N asked for. Checks
// them against the memory budget before any is read (analyze/common/event_budget.hpp).
std::int64_t rows_to_read(std::string_view report, std::string_view what, std::int64_t rows, std::int64_t row_bytes,
                          const ReportOptions& options) {
  const std::int64_t kept = options.first_rows > 0 ? std::min(rows, options.first_rows) : rows;
  check_event_budget({report, what, kept, row_bytes, kTraceReportAdvice});
  return kept;
}

// " LIMIT N" when fewer rows than the table holds are wanted.
std::string limit_sql(std::int64_t kept, std::int64_t rows) {
  return kept < rows ? " LIMIT " + std::to_string(kept) : "";
}

void add_first_rows_note(Report& r, std::int64_t kept, std::int64_t rows, std::string_view what) {
  if (kept < rows)
    r.add_note(NoteLevel::kInfo, "the first " + std::to_string(kept) + " of " + std::to_string(rows) + " " +
                                     std::string(what) + " in time order (--top)");
}

}  // namespace

Report cuda_api_sum(Database& db) {
  static const SummaryShape shape{"cuda_api_sum", "CUDA API Summary", false, "Num Calls", {"Name"}, "CUDA API calls"};
  return summarize(shape,
                   detail::group_values_by_key(db, "SELECT COALESCE(name, '<unknown>'), duration_ns FROM v_api_calls"));
}

Report cuda_gpu_kern_sum(Database& db, const ReportOptions& options) {
  static const SummaryShape shape{"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", false, "Instances", {"Name"},
                                  "CUDA kernels"};
  return summarize(shape, detail::group_values_by_key(
                              db, "SELECT " + detail::kernel_name_sql(options) + ", duration_ns FROM v_kernels"));
}

Report cuda_gpu_mem_time_sum(Database& db) {
  static const SummaryShape shape{
      "cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", false, "Count", {"Operation"},
      "CUDA memory operations"};
  return summarize(shape, memory_groups(db, "end_ns - start_ns"));
}

Report cuda_gpu_mem_size_sum(Database& db) {
  static const SummaryShape shape{
      "cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)", true, "Count", {"Operation"},
      "CUDA memory operations"};
  return summarize(shape, memory_groups(db, "COALESCE(bytes, 0)"));
}

Report nvtx_sum(Database& db) {
  static const SummaryShape shape{"nvtx_sum",  "NVTX Range Summary", false,
                                  "Instances", {"Style", "Range"},   "closed NVTX ranges"};
  return summarize(shape, detail::group_values_by_key(
                              db, "SELECT COALESCE(style, ''), " + std::string(detail::kNvtxRangeNameSql) +
                                      ", duration_ns FROM v_nvtx WHERE style IS NOT 'Mark' AND end_ns IS NOT NULL" +
                                      detail::user_nvtx_only_sql(db)));
}

Report cuda_gpu_sum(Database& db, const ReportOptions& options) {
  static const SummaryShape shape{
      "cuda_gpu_sum", "CUDA GPU Summary (Kernels/MemOps)", false,
      "Instances",    {"Category", "Operation"},           "CUDA kernels or memory operations"};
  const std::string sql = "SELECT 'CUDA_KERNEL', " + detail::kernel_name_sql(options) +
                          ", duration_ns FROM v_kernels UNION ALL SELECT 'MEMORY_OPER', * FROM (" +
                          memory_ops_sql("end_ns - start_ns") + ")";
  return summarize(shape, detail::group_values_by_key(db, sql, [](Key k) {
                     if (k[0] == "MEMORY_OPER") k[1] = memory_operation_name(k[1]);
                     return k;
                   }));
}

Report cuda_gpu_trace(Database& db, const ReportOptions& options) {
  Report r;
  r.name = "cuda_gpu_trace";
  r.title = "CUDA GPU Trace";
  r.add_column("Start", "ns", ColumnType::kInteger)
      .add_column("Duration", "ns", ColumnType::kInteger)
      .add_column("CorrId", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("GrdX", "", ColumnType::kInteger)
      .add_column("GrdY", "", ColumnType::kInteger)
      .add_column("GrdZ", "", ColumnType::kInteger)
      .add_column("BlkX", "", ColumnType::kInteger)
      .add_column("BlkY", "", ColumnType::kInteger)
      .add_column("BlkZ", "", ColumnType::kInteger)
      .add_column("Reg/Trd", "", ColumnType::kInteger)
      .add_column("StcSMem", "bytes", ColumnType::kInteger)
      .add_column("DymSMem", "bytes", ColumnType::kInteger)
      .add_column("Bytes", "bytes", ColumnType::kInteger)
      .add_column("Throughput", "GB/s", ColumnType::kReal)
      .add_column("SrcMemKd", "", ColumnType::kText)
      .add_column("DstMemKd", "", ColumnType::kText)
      .add_column("Device", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Ctx", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Strm", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Name", "", ColumnType::kText);
  // Name holds the copy kind for memcpys (named below); the last two columns (event
  // class 0 kernel / 1 memcpy / 2 memset, row id) only order ties deterministically.
  const std::string throughput = "CASE WHEN end_ns > start_ns THEN CAST(bytes AS REAL) / (end_ns - start_ns) END";
  const std::string sql =
      "SELECT start_ns, duration_ns, correlation_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, "
      "registers_per_thread, static_shared_memory, dynamic_shared_memory, NULL, NULL, NULL, NULL, "
      "device_id, context_id, stream_id, " +
      detail::kernel_name_sql(options) +
      ", 0 AS cls, id FROM v_kernels "
      "UNION ALL SELECT start_ns, end_ns - start_ns, correlation_id, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, NULL, bytes, " +
      throughput +
      ", src_kind, dst_kind, device_id, context_id, stream_id, "
      "COALESCE(copy_kind, 'unknown'), 1, id FROM memcpys "
      "UNION ALL SELECT start_ns, end_ns - start_ns, correlation_id, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, NULL, bytes, " +
      throughput +
      ", memory_kind, NULL, device_id, context_id, stream_id, "
      "'memset', 2, id FROM memsets ORDER BY 1, cls, id";
  const std::int64_t rows = db.query_int(
                                  "SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpys) + "
                                  "(SELECT COUNT(*) FROM memsets)")
                                .value_or(0);
  const std::int64_t kept =
      rows_to_read(r.name, "kernels, memcpys and memsets (one row each)", rows, kGpuTraceRowBytes, options);
  const std::size_t name = r.columns.size() - 1;
  r.rows.reserve(static_cast<std::size_t>(kept));
  append_rows(r, db, sql + limit_sql(kept, rows), [&](Row& row, Statement& st) {
    if (st.column_int(static_cast<int>(name) + 1) != 0)
      row[name] = memory_operation_name(std::get<std::string>(row[name]));
  });
  if (r.rows.empty()) r.add_note(NoteLevel::kInfo, "no CUDA kernels or memory operations in the capture range");
  add_first_rows_note(r, kept, rows, "kernels, memcpys and memsets");
  return r;
}

Report cuda_api_trace(Database& db, const ReportOptions& options) {
  Report r;
  r.name = "cuda_api_trace";
  r.title = "CUDA API Trace";
  r.add_column("Start", "ns", ColumnType::kInteger)
      .add_column("Duration", "ns", ColumnType::kInteger)
      .add_column("Name", "", ColumnType::kText)
      .add_column("Result", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("CorrID", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Pid", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Tid", "", ColumnType::kInteger, ColumnKind::kIdentifier);
  const std::int64_t rows = db.query_int("SELECT COUNT(*) FROM api_calls").value_or(0);
  const std::int64_t kept = rows_to_read(r.name, "CUDA API calls (one row each)", rows, kApiTraceRowBytes, options);
  r.rows.reserve(static_cast<std::size_t>(kept));
  append_rows(r, db,
              "SELECT start_ns, duration_ns, COALESCE(name, '<unknown>'), return_value, correlation_id, pid, tid, id "
              "FROM v_api_calls ORDER BY start_ns, id" +
                  limit_sql(kept, rows),
              [](Row&, Statement&) {});
  if (r.rows.empty()) r.add_note(NoteLevel::kInfo, "no CUDA API calls in the capture range");
  add_first_rows_note(r, kept, rows, "CUDA API calls");
  return r;
}

Report top_kernels(Database& db, int top_n, const ReportOptions& options) {
  top_n = std::max(top_n, 1);
  const Report all = cuda_gpu_kern_sum(db, options);
  Report r;
  r.name = "top_kernels";
  r.title = "Top CUDA Kernels by GPU Time";
  std::vector<std::size_t> keep;
  for (const char* name : {"Time", "Total Time", "Instances", "Avg", "Name"}) {
    const auto it =
        std::find_if(all.columns.begin(), all.columns.end(), [&](const Column& c) { return c.name == name; });
    keep.push_back(static_cast<std::size_t>(it - all.columns.begin()));
    r.columns.push_back(*it);
  }
  std::int64_t all_ns = 0, shown_ns = 0;
  for (std::size_t i = 0; i < all.rows.size(); ++i) {
    const auto total = std::get<std::int64_t>(all.rows[i][keep[1]]);
    all_ns = core::sat_add(all_ns, total);
    if (i >= static_cast<std::size_t>(top_n)) continue;
    shown_ns = core::sat_add(shown_ns, total);
    Row row;
    for (std::size_t c : keep) row.push_back(all.rows[i][c]);
    r.rows.push_back(std::move(row));
  }
  r.notes = all.notes;  // "no CUDA kernels in the capture range" when empty
  if (all.rows.size() > static_cast<std::size_t>(top_n)) {
    const auto rest = all.rows.size() - static_cast<std::size_t>(top_n);
    r.add_note(NoteLevel::kInfo, "showing the top " + std::to_string(top_n) + " of " + std::to_string(all.rows.size()) +
                                     " kernel names; the other " + std::to_string(rest) + " take " +
                                     units::duration_ns(core::sat_sub(all_ns, shown_ns)) + " of kernel time");
  }
  if (!all.rows.empty())
    r.add_note(NoteLevel::kInfo, "Time (%) is of the summed kernel time; concurrent kernels each count in full");
  return r;
}

}  // namespace gpuscope::analyze
