#include "analyze/nsys/trace_summary.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "core/saturating.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/timeline/judged_window.hpp"
#include "core/stats.hpp"
#include "store/data_loss_kinds.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::busy_per_gpu;
using detail::GpuBusy;
using detail::wall_time_ns;
using store::Database;
using store::Statement;

constexpr double kNsPerMs = 1e6;

Cell percent_or_null(double part, double whole) {
  if (whole <= 0.0) return std::monostate{};
  return part / whole * 100.0;
}

std::string pid_prefix(const Statement& st, int col) {
  return st.is_null(col) ? std::string() : "pid " + std::to_string(st.column_int(col)) + ": ";
}

}  // namespace

void detail::add_trace_notes(Database& db, Report& overview) {
  std::vector<Note> loss, warnings, infos;
  {
    Statement st = db.prepare(
        "SELECT pid, COALESCE(what, 'unknown'), count, COALESCE(severity, 'warning'), "
        "COALESCE(detail, '') FROM data_loss ORDER BY pid, what");
    while (st.step()) {
      std::string text = pid_prefix(st, 0) + st.column_text(1);
      if (!st.is_null(2)) text += " (count " + std::to_string(st.column_int(2)) + ")";
      if (!st.column_text(4).empty()) text += ": " + st.column_text(4);
      // Severity as declared in store/data_loss_kinds.hpp; unknown text reads as a warning.
      switch (store::parse_loss_severity(st.column_text(3))) {
        case store::LossSeverity::kDataLoss:
          loss.push_back({NoteLevel::kDataLoss, std::move(text)});
          break;
        case store::LossSeverity::kInfo:
          infos.push_back({NoteLevel::kInfo, std::move(text)});
          break;
        case store::LossSeverity::kWarning:
          warnings.push_back({NoteLevel::kWarning, std::move(text)});
          break;
      }
    }
  }
  {
    Statement st = db.prepare("SELECT pid, term_signal FROM processes WHERE ended_cleanly = 0 ORDER BY pid");
    while (st.step()) {
      std::string text = "process " + std::to_string(st.column_int(0)) + " ended abnormally";
      if (!st.is_null(1)) text += " (killed by signal " + std::to_string(st.column_int(1)) + ")";
      text += "; events after its last flush are missing";
      loss.push_back({NoteLevel::kDataLoss, std::move(text)});
    }
  }
  {
    Statement st =
        db.prepare("SELECT pid, COALESCE(severity, 'warning'), COALESCE(text, '') FROM messages ORDER BY ts_ns");
    while (st.step()) {
      std::string text = pid_prefix(st, 0) + st.column_text(2);
      if (st.column_text(1) == "info") {
        infos.push_back({NoteLevel::kInfo, std::move(text)});
      } else {
        warnings.push_back({NoteLevel::kWarning, std::move(text)});
      }
    }
  }
  for (auto* group : {&loss, &warnings, &infos})
    for (Note& n : *group) overview.notes.push_back(std::move(n));
}

namespace {

Report memory_summary(Database& db) {
  Report r;
  r.name = "cuda_gpu_mem_sum";
  r.title = "CUDA GPU Memory Operations";
  r.add_column("Operation", "", ColumnType::kText)
      .add_column("Count", "", ColumnType::kInteger)
      .add_column("Total", "MB", ColumnType::kReal)
      .add_column("Total Time", "ns", ColumnType::kInteger)
      .add_column("Throughput", "GB/s", ColumnType::kReal);

  struct Row_ {
    std::string op;
    std::int64_t count = 0, bytes = 0, time_ns = 0;
  };
  std::vector<Row_> rows;
  Statement st = db.prepare(
      "SELECT 'memcpy', COALESCE(copy_kind, 'unknown'), COUNT(*), COALESCE(SUM(bytes), 0), "
      "SUM(end_ns - start_ns) FROM memcpys GROUP BY 2 UNION ALL "
      "SELECT 'memset', '', COUNT(*), COALESCE(SUM(bytes), 0), SUM(end_ns - start_ns) FROM memsets");
  while (st.step()) {
    if (st.column_int(2) == 0) continue;  // the memset aggregate always yields a row
    std::string op = st.column_text(0) == "memset" ? "[CUDA memset]" : memcpy_operation_name(st.column_text(1));
    // Several schema kinds may share a name ('unknown' and odd values): merge them.
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row_& x) { return x.op == op; });
    if (it == rows.end()) it = rows.insert(rows.end(), Row_{std::move(op)});
    it->count = core::sat_add(it->count, st.column_int(2));
    it->bytes = core::sat_add(it->bytes, st.column_int(3));
    it->time_ns = core::sat_add(it->time_ns, st.column_int(4));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row_& a, const Row_& b) {
    return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.op < b.op;
  });
  for (const Row_& x : rows) {
    Cell throughput = std::monostate{};
    if (x.time_ns > 0) throughput = static_cast<double>(x.bytes) / static_cast<double>(x.time_ns);
    r.rows.push_back(Row{x.op, x.count, static_cast<double>(x.bytes) / 1e6, x.time_ns, throughput});
  }
  return r;
}

}  // namespace

std::string memcpy_operation_name(std::string_view copy_kind) {
  static const std::map<std::string_view, std::string_view> kNames = {
      {"HtoD", "Host-to-Device"},  {"DtoH", "Device-to-Host"}, {"DtoD", "Device-to-Device"},
      {"HtoH", "Host-to-Host"},    {"PtoP", "Peer-to-Peer"},   {"HtoA", "Host-to-Array"},
      {"AtoH", "Array-to-Host"},   {"AtoA", "Array-to-Array"}, {"AtoD", "Array-to-Device"},
      {"DtoA", "Device-to-Array"},
  };
  const auto it = kNames.find(copy_kind);
  return "[CUDA memcpy " + std::string(it == kNames.end() ? "Unknown" : it->second) + "]";
}

std::vector<Report> trace_summary(Database& db, int top_n, bool whole_run) {
  top_n = std::max(top_n, 1);
  // The overview judges the judged window (as stats' top and gpu_util); the tables after it
  // cover the whole run (as stats' cuda_gpu_kern_sum and cuda_gpu_mem_*).
  const JudgedWindow window = judged_window(db, whole_run);
  std::optional<FilteredTrace> scoped = judged_trace(db, window);
  Database& on = scoped ? scoped->db : db;
  const detail::GpuIndexMap gpus = detail::GpuIndexMap::load(on);
  const std::map<std::int64_t, GpuBusy> busy = busy_per_gpu(on, gpus);

  const std::int64_t whole_wall_ns = wall_time_ns(db);
  const std::int64_t wall_ns = scoped ? wall_time_ns(on) : whole_wall_ns;
  const std::int64_t kernels = on.query_int("SELECT COUNT(*) FROM kernels").value_or(0);
  const std::int64_t memcpys = on.query_int("SELECT COUNT(*) FROM memcpys").value_or(0);
  const std::int64_t memsets = on.query_int("SELECT COUNT(*) FROM memsets").value_or(0);
  const std::int64_t all_gpu_ops = db.query_int(
                                         "SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpys) + "
                                         "(SELECT COUNT(*) FROM memsets)")
                                       .value_or(0);
  const std::int64_t processes = db.query_int("SELECT COUNT(*) FROM processes").value_or(0);
  double busy_ns = 0;  // a sum over GPUs: in double, as a damaged log's times can pass 2^63 ns
  for (const auto& [gpu, b] : busy) busy_ns += static_cast<double>(b.busy_ns);
  const auto active_gpus = static_cast<std::int64_t>(busy.size());

  Report overview;
  overview.name = "trace_overview";
  overview.title = "Trace Overview";
  overview.add_column("Wall Time", "ms", ColumnType::kReal)
      .add_column("GPU Busy Time", "ms", ColumnType::kReal)
      .add_column("GPU Busy", "%", ColumnType::kReal)
      .add_column("Whole-Run Wall Time", "ms", ColumnType::kReal)
      .add_column("Kernels", "", ColumnType::kInteger)
      .add_column("Memcpys", "", ColumnType::kInteger)
      .add_column("Memsets", "", ColumnType::kInteger)
      .add_column("Processes", "", ColumnType::kInteger)
      .add_column("GPUs", "", ColumnType::kInteger);
  // A trace whose logs hold no event with a time (a program killed before the collector's
  // first flush leaves a header-only log) has no wall time: say so instead of "0.000 ms".
  const bool recorded_nothing = whole_wall_ns == 0 && all_gpu_ops == 0 &&
                                db.query_int(
                                      "SELECT (SELECT COUNT(*) FROM api_calls) + (SELECT COUNT(*) FROM nvtx_events) + "
                                      "(SELECT COUNT(*) FROM syncs)")
                                        .value_or(0) == 0;
  overview.rows.push_back(Row{
      recorded_nothing ? Cell{std::monostate{}} : Cell{static_cast<double>(wall_ns) / kNsPerMs},
      recorded_nothing ? Cell{std::monostate{}} : Cell{static_cast<double>(busy_ns) / kNsPerMs},
      percent_or_null(static_cast<double>(busy_ns), static_cast<double>(wall_ns) * static_cast<double>(active_gpus)),
      recorded_nothing ? Cell{std::monostate{}} : Cell{static_cast<double>(whole_wall_ns) / kNsPerMs}, kernels, memcpys,
      memsets, processes, active_gpus});
  detail::add_trace_notes(db, overview);
  if (recorded_nothing) {
    overview.add_note(NoteLevel::kWarning,
                      "no events were recorded before the program stopped (its event logs end before the "
                      "first flush: killed early, or it never used CUDA), so there is no wall time or GPU time "
                      "to report");
  } else if (all_gpu_ops == 0) {
    overview.add_note(NoteLevel::kWarning, "no GPU activity in the capture range");
  } else if (active_gpus > 1) {
    overview.add_note(NoteLevel::kInfo, "GPU Busy (%) is of wall time x " + std::to_string(active_gpus) + " GPUs");
  }
  if (!window.note.empty() && !recorded_nothing) overview.add_note(NoteLevel::kInfo, window.note);

  std::vector<Report> out;
  out.push_back(std::move(overview));

  if (active_gpus > 1) {
    Report util;
    util.name = "gpu_utilization";
    util.title = "GPU Utilization";
    util.add_column("GPU", "", ColumnType::kInteger)
        .add_column("Name", "", ColumnType::kText)
        .add_column("Busy Time", "ms", ColumnType::kReal)
        .add_column("Busy", "%", ColumnType::kReal)
        .add_column("Kernels", "", ColumnType::kInteger);
    for (const auto& [gpu, b] : busy) {
      util.rows.push_back(Row{gpu, b.name, static_cast<double>(b.busy_ns) / kNsPerMs,
                              percent_or_null(static_cast<double>(b.busy_ns), static_cast<double>(wall_ns)),
                              b.kernels});
    }
    out.push_back(std::move(util));
  }
  const std::string whole = "the whole run, as gpuscope stats -r ";
  if (db.query_int("SELECT COUNT(*) FROM kernels").value_or(0) > 0) {
    Report k = top_kernels(db, top_n);
    k.name = "cuda_gpu_kern_sum";
    if (!window.note.empty()) k.add_note(NoteLevel::kInfo, whole + "cuda_gpu_kern_sum");
    out.push_back(std::move(k));
  }
  if (db.query_int("SELECT (SELECT COUNT(*) FROM memcpys) + (SELECT COUNT(*) FROM memsets)").value_or(0) > 0) {
    out.push_back(memory_summary(db));
    if (!window.note.empty()) out.back().add_note(NoteLevel::kInfo, whole + "cuda_gpu_mem_time_sum");
  }
  return out;
}

}  // namespace gpuscope::analyze
