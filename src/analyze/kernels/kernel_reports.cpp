#include "analyze/kernels/kernel_reports.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyze/common/report_text.hpp"
#include "analyze/kernels/kernel_explain.hpp"
#include "core/kernel_metric_sets.hpp"
#include "core/occupancy.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::real_or_null;
using store::Database;
using store::Statement;

std::string dims(const std::int64_t (&v)[3]) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

// Builds a Report from columns whose cells are filled per row, dropping derived columns
// that are NULL everywhere.
struct Builder {
  struct Col {
    Column column;
    std::vector<Cell> cells;
    bool droppable = false;
  };
  std::vector<Col> cols;
  std::size_t add(std::string name, std::string unit, ColumnType type, bool droppable = false,
                  ColumnKind kind = ColumnKind::kQuantity) {
    cols.push_back({Column{std::move(name), std::move(unit), type, kind}, {}, droppable});
    return cols.size() - 1;
  }
  void finish(Report& r) {
    std::vector<std::size_t> keep;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const bool all_null = std::all_of(cols[i].cells.begin(), cols[i].cells.end(),
                                        [](const Cell& c) { return std::holds_alternative<std::monostate>(c); });
      if (!(cols[i].droppable && all_null && !cols[i].cells.empty())) keep.push_back(i);
    }
    for (std::size_t i : keep) r.columns.push_back(cols[i].column);
    const std::size_t rows = cols.empty() ? 0 : cols[0].cells.size();
    for (std::size_t row = 0; row < rows; ++row) {
      Row out;
      for (std::size_t i : keep) out.push_back(cols[i].cells[row]);
      r.rows.push_back(std::move(out));
    }
  }
};

Cell scaled(double v, double scale) { return real_or_null(v * scale); }
Cell text_or_null(const std::string& s) { return s.empty() ? Cell{std::monostate{}} : Cell{s}; }

void add_common_notes(const KernelAnalysis& a, Report& r) {
  if (!a.has_profiles) {
    r.add_note(NoteLevel::kInfo, std::string(kNoKernelProfilesNote));
    return;
  }
  if (a.launches.empty()) {
    r.add_note(NoteLevel::kInfo, "no profiled launch matches the name filter");
    return;
  }
  if (a.ceiling_source == "measured")
    r.add_note(NoteLevel::kInfo, "% of Ceiling is of the measured ceilings of the machine profile (gpuscope peak)");
  for (const std::string& w : a.warnings) r.add_note(NoteLevel::kWarning, w);
  std::set<std::string> seen;
  for (const KernelLaunch& l : a.launches)
    for (std::string& n : derivation_notes(l.derived))
      if (seen.insert(n).second) r.add_note(NoteLevel::kInfo, std::move(n));
}

}  // namespace

Report kernel_launch_report(const KernelAnalysis& a) {
  Report r;
  r.name = "kernel_metrics";
  r.title = "Hardware counters per kernel launch (gpuscope kernels)";
  Builder b;
  const auto launch = b.add("Launch", "", ColumnType::kInteger, false, ColumnKind::kIdentifier);
  const auto pid = b.add("PID", "", ColumnType::kInteger, false, ColumnKind::kIdentifier);
  const auto name = b.add("Name", "", ColumnType::kText);
  const auto grid = b.add("Grid", "", ColumnType::kText);
  const auto block = b.add("Block", "", ColumnType::kText);
  const auto regs = b.add("Reg/Trd", "", ColumnType::kInteger);
  const auto dur = b.add("Duration", "us", ColumnType::kReal);
  std::vector<std::size_t> metric_cols;
  for (const std::string& m : a.metrics) {
    const kernels::MetricInfo* info = kernels::find_metric_info(m);
    // Counters (".sum" rollups) are whole numbers: integer columns print them without decimals.
    metric_cols.push_back(b.add(m, info ? std::string(info->unit) : std::string(),
                                m.ends_with(".sum") ? ColumnType::kInteger : ColumnType::kReal));
  }
  const auto dram_bw = b.add("DRAM BW", "GB/s", ColumnType::kReal, true);
  const auto l2_bw = b.add("L2 BW", "GB/s", ColumnType::kReal, true);
  const auto l1_bw = b.add("L1 BW", "GB/s", ColumnType::kReal, true);
  const auto flop = b.add("FLOP", "GFLOP", ColumnType::kReal, true);
  const auto perf = b.add("Perf", "GFLOP/s", ColumnType::kReal, true);
  const auto ai_dram = b.add("AI DRAM", "FLOP/B", ColumnType::kReal, true);
  const auto ai_l2 = b.add("AI L2", "FLOP/B", ColumnType::kReal, true);
  const auto ai_l1 = b.add("AI L1", "FLOP/B", ColumnType::kReal, true);
  const auto theo = b.add("Theoretical Occ", "%", ColumnType::kReal, true);
  const auto limiter = b.add("Occ Limiter", "", ColumnType::kText, true);
  const auto ceiling = b.add("Ceiling", "", ColumnType::kText, true);
  const auto pct = b.add("% of Ceiling", "%", ColumnType::kReal, true);
  const auto bound = b.add("Bound", "", ColumnType::kText);
  const auto floor_t = b.add("Floor Time", "ns", ColumnType::kReal, true);
  const auto speedup = b.add("Est. Speedup", "%", ColumnType::kReal, true);
  const auto time_share = b.add("GPU Time Share", "%", ColumnType::kReal, true);
  const auto gain = b.add("Program Gain", "%", ColumnType::kReal, true);
  const auto expl = b.add("Explanation", "", ColumnType::kText);
  for (const KernelLaunch& l : a.launches) {
    const kernels::KernelDerived& d = l.derived;
    b.cols[launch].cells.push_back(l.launch_index >= 0 ? Cell{l.launch_index} : Cell{});
    b.cols[pid].cells.push_back(l.pid);
    b.cols[name].cells.push_back(l.display_name());
    b.cols[grid].cells.push_back(dims(l.grid));
    b.cols[block].cells.push_back(dims(l.block));
    b.cols[regs].cells.push_back(l.launch.registers_per_thread >= 0 ? Cell{l.launch.registers_per_thread} : Cell{});
    b.cols[dur].cells.push_back(scaled(d.duration_s, 1e6));
    for (std::size_t i = 0; i < a.metrics.size(); ++i) {
      const auto it = l.values.find(a.metrics[i]);
      Cell c = it == l.values.end() ? Cell{} : real_or_null(it->second);
      if (std::holds_alternative<double>(c) && b.cols[metric_cols[i]].column.type == ColumnType::kInteger)
        c = static_cast<std::int64_t>(std::llround(std::get<double>(c)));
      b.cols[metric_cols[i]].cells.push_back(std::move(c));
    }
    b.cols[dram_bw].cells.push_back(scaled(d.dram_bandwidth, 1e-9));
    b.cols[l2_bw].cells.push_back(scaled(d.l2_bandwidth, 1e-9));
    b.cols[l1_bw].cells.push_back(scaled(d.l1_bandwidth, 1e-9));
    b.cols[flop].cells.push_back(scaled(d.flops, 1e-9));
    b.cols[perf].cells.push_back(scaled(d.flop_rate, 1e-9));
    b.cols[ai_dram].cells.push_back(real_or_null(d.intensity_dram));
    b.cols[ai_l2].cells.push_back(real_or_null(d.intensity_l2));
    b.cols[ai_l1].cells.push_back(real_or_null(d.intensity_l1));
    b.cols[theo].cells.push_back(real_or_null(d.occupancy.theoretical_pct));
    b.cols[limiter].cells.push_back(
        d.occupancy.computed ? Cell{std::string(occupancy::limiter_name(d.occupancy.computed->limiter))} : Cell{});
    b.cols[ceiling].cells.push_back(text_or_null(d.ceiling));
    b.cols[pct].cells.push_back(real_or_null(d.pct_of_ceiling));
    b.cols[bound].cells.push_back(d.bound_label);
    b.cols[floor_t].cells.push_back(scaled(d.floor_s, 1e9));
    b.cols[speedup].cells.push_back(real_or_null(d.est_speedup_pct));
    b.cols[time_share].cells.push_back(real_or_null(d.time_share_pct));
    b.cols[gain].cells.push_back(real_or_null(d.program_gain_pct));
    b.cols[expl].cells.push_back(kernel_explanation(d, l.launch, l.device));
  }
  b.finish(r);
  add_common_notes(a, r);
  return r;
}

Report kernel_name_report(const KernelAnalysis& a) {
  Report r;
  r.name = "kernel_metrics_sum";
  r.title = "Hardware counters per kernel name (gpuscope kernels)";
  Builder b;
  const auto name = b.add("Name", "", ColumnType::kText);
  const auto count = b.add("Launches", "", ColumnType::kInteger);
  const auto total = b.add("Total Time", "us", ColumnType::kReal);
  const auto avg = b.add("Avg", "us", ColumnType::kReal);
  const auto dram = b.add("DRAM Bytes", "MB", ColumnType::kReal, true);
  const auto dram_bw = b.add("DRAM BW", "GB/s", ColumnType::kReal, true);
  const auto l2_bw = b.add("L2 BW", "GB/s", ColumnType::kReal, true);
  const auto l1_bw = b.add("L1 BW", "GB/s", ColumnType::kReal, true);
  const auto flop = b.add("FLOP", "GFLOP", ColumnType::kReal, true);
  const auto perf = b.add("Perf", "GFLOP/s", ColumnType::kReal, true);
  const auto ai = b.add("AI DRAM", "FLOP/B", ColumnType::kReal, true);
  const auto occ = b.add("Achieved Occ", "%", ColumnType::kReal, true);
  const auto ceiling = b.add("Ceiling", "", ColumnType::kText, true);
  const auto pct = b.add("% of Ceiling", "%", ColumnType::kReal, true);
  const auto bound = b.add("Bound", "", ColumnType::kText);
  const auto share = b.add("Bound Share", "%", ColumnType::kReal, true);
  const auto floor_t = b.add("Floor Time", "ns", ColumnType::kReal, true);
  const auto speedup = b.add("Est. Speedup", "%", ColumnType::kReal, true);
  const auto time_share = b.add("GPU Time Share", "%", ColumnType::kReal, true);
  const auto gain = b.add("Program Gain", "%", ColumnType::kReal, true);
  const auto expl = b.add("Explanation", "", ColumnType::kText);
  for (const KernelName& k : a.names) {
    const kernels::KernelDerived& d = k.derived;
    b.cols[name].cells.push_back(k.name);
    b.cols[count].cells.push_back(k.launches);
    b.cols[total].cells.push_back(k.total_duration_s * 1e6);
    b.cols[avg].cells.push_back(k.launches > 0 ? Cell{k.total_duration_s * 1e6 / static_cast<double>(k.launches)}
                                               : Cell{});
    b.cols[dram].cells.push_back(scaled(k.dram_bytes, 1e-6));
    b.cols[dram_bw].cells.push_back(scaled(d.dram_bandwidth, 1e-9));
    b.cols[l2_bw].cells.push_back(scaled(d.l2_bandwidth, 1e-9));
    b.cols[l1_bw].cells.push_back(scaled(d.l1_bandwidth, 1e-9));
    b.cols[flop].cells.push_back(scaled(k.flops, 1e-9));
    b.cols[perf].cells.push_back(scaled(d.flop_rate, 1e-9));
    b.cols[ai].cells.push_back(real_or_null(d.intensity_dram));
    b.cols[occ].cells.push_back(real_or_null(d.occupancy.achieved_pct));
    b.cols[ceiling].cells.push_back(text_or_null(d.ceiling));
    b.cols[pct].cells.push_back(real_or_null(d.pct_of_ceiling));
    b.cols[bound].cells.push_back(k.dominant_label);
    b.cols[share].cells.push_back(real_or_null(k.dominant_share_pct));
    b.cols[floor_t].cells.push_back(scaled(d.floor_s, 1e9));
    b.cols[speedup].cells.push_back(real_or_null(d.est_speedup_pct));
    b.cols[time_share].cells.push_back(real_or_null(d.time_share_pct));
    b.cols[gain].cells.push_back(real_or_null(d.program_gain_pct));
    b.cols[expl].cells.push_back(kernel_explanation(d, k.launch, k.device));
  }
  b.finish(r);
  add_common_notes(a, r);
  return r;
}

Report kernel_metrics(Database& db, const KernelReportOptions& options) {
  return kernel_launch_report(analyze_kernels(db, options));
}

Report kernel_metrics_sum(Database& db, const KernelReportOptions& options) {
  return kernel_name_report(analyze_kernels(db, options));
}

std::string profiled_gpu_uuid(Database& db) {
  if (!db.has_table("kernel_profiles") || !db.has_table("devices")) return {};
  return db
      .query_text(
          "SELECT d.uuid FROM kernel_profiles p JOIN devices d ON d.pid = p.pid AND d.device_id = p.device_id "
          "WHERE d.uuid IS NOT NULL AND d.uuid != '' ORDER BY p.launch_index, p.id LIMIT 1")
      .value_or("");
}

KernelRunOutcome kernel_run_outcome(Database& db) {
  KernelRunOutcome out;
  if (db.has_table("kernel_profiles")) out.profiled = db.query_int("SELECT COUNT(*) FROM kernel_profiles").value_or(0);
  Statement st = db.prepare("SELECT severity, text FROM messages WHERE severity <> 'info' ORDER BY ts_ns");
  while (st.step()) out.problems.emplace_back(st.column_text(0), st.column_text(1));
  return out;
}

}  // namespace gpuscope::analyze
