#include "analyze/kernels/kernel_reports.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <utility>

#include "analyze/kernels/kernel_explain.hpp"
#include "analyze/common/report_text.hpp"
#include "core/bench_derive.hpp"
#include "core/kernel_metric_sets.hpp"
#include "core/occupancy.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::real_or_null;
using store::Database;
using store::Statement;

struct DeviceCeilings {
  kernels::KernelDevice device;
  MachineProfile ceilings;
  std::string uuid;
  std::string name;
};

using DeviceKey = std::pair<std::int64_t, std::int64_t>;  // (pid, device_id)

std::map<DeviceKey, DeviceCeilings> read_devices(Database& db, const KernelReportOptions& o,
                                                 std::vector<std::string>& warnings) {
  std::map<DeviceKey, DeviceCeilings> out;
  if (!db.has_table("devices")) return out;
  Statement st = db.prepare(
      "SELECT pid, device_id, COALESCE(name, ''), COALESCE(uuid, ''), COALESCE(cc_major, 0), COALESCE(cc_minor, 0), "
      "COALESCE(sm_count, 0), COALESCE(l2_cache_bytes, 0), COALESCE(core_clock_khz, 0), "
      "COALESCE(memory_clock_khz, 0), COALESCE(memory_bus_width_bits, 0), "
      "COALESCE(memory_bandwidth_bytes_per_s, 0), COALESCE(max_threads_per_block, 0), "
      "COALESCE(max_warps_per_sm, 0), COALESCE(max_blocks_per_sm, 0), COALESCE(max_registers_per_sm, 0), "
      "COALESCE(max_registers_per_block, 0), COALESCE(max_shared_memory_per_sm, 0) FROM devices");
  std::set<std::string> mismatched;
  while (st.step()) {
    DeviceCeilings d;
    d.name = st.column_text(2);
    d.uuid = st.column_text(3);
    d.device.sm_count = st.column_int(6);
    auto& l = d.device.limits;
    l.cc_major = static_cast<int>(st.column_int(4));
    l.cc_minor = static_cast<int>(st.column_int(5));
    l.max_threads_per_block = st.column_int(12);
    l.max_warps_per_sm = st.column_int(13);
    l.max_blocks_per_sm = st.column_int(14);
    l.max_registers_per_sm = st.column_int(15);
    l.max_registers_per_block = st.column_int(16);
    l.max_shared_memory_per_sm = st.column_int(17);
    if (o.profile) {
      if (!o.profile->device.uuid.empty() && !d.uuid.empty() && o.profile->device.uuid != d.uuid &&
          mismatched.insert(d.uuid).second)
        warnings.push_back("the machine profile was measured on " + o.profile->device.name + " (" +
                           o.profile->device.uuid + ") but the kernels ran on " + d.name + " (" + d.uuid +
                           "): its ceilings may not apply; run `gpuscope peak` on this GPU");
    } else {
      DeviceFacts f;
      f.name = d.name;
      f.uuid = d.uuid;
      f.cc_major = l.cc_major;
      f.cc_minor = l.cc_minor;
      f.sm_count = static_cast<int>(d.device.sm_count);
      f.l2_bytes = st.column_int(7);
      f.max_sm_clock_mhz = static_cast<double>(st.column_int(8)) / 1000.0;
      f.max_mem_clock_mhz = static_cast<double>(st.column_int(9)) / 1000.0;
      f.memory_bus_width_bits = static_cast<int>(st.column_int(10));
      d.ceilings = core::theoretical_profile(f, f.max_sm_clock_mhz);
      const double bw = static_cast<double>(st.column_int(11));
      if (!d.ceilings.find("dram_copy") && bw > 0) {
        for (const char* name : {"dram_read", "dram_write", "dram_copy"}) {
          Ceiling c;
          c.name = name;
          c.measured = c.theoretical = bw;
          c.method = "theoretical: CUPTI's device memory bandwidth";
          d.ceilings.ceilings.push_back(std::move(c));
        }
      }
    }
    out[{st.column_int(0), st.column_int(1)}] = std::move(d);
  }
  return out;
}

std::vector<std::string> ordered_metrics(const std::set<std::string>& collected) {
  std::vector<std::string> out;
  for (const kernels::MetricSet& s : kernels::metric_sets())
    for (const kernels::MetricInfo& m : s.metrics)
      if (collected.count(std::string(m.name)) && std::find(out.begin(), out.end(), m.name) == out.end())
        out.emplace_back(m.name);
  for (const std::string& m : collected)
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}

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

KernelAnalysis analyze_kernels(Database& db, const KernelReportOptions& o) {
  KernelAnalysis a;
  std::optional<std::regex> filter;
  if (!o.name_regex.empty()) {
    try {
      filter.emplace(o.name_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("invalid kernel name regex '" + o.name_regex + "': " + e.what());
    }
  }
  if (!db.has_table("kernel_profiles") || !db.has_table("kernel_metrics")) return a;
  a.has_profiles = db.query_int("SELECT COUNT(*) FROM kernel_profiles").value_or(0) > 0;
  if (!a.has_profiles) return a;

  auto devices = read_devices(db, o, a.warnings);
  // gpuscope kernels --cache-control all (meta, written by the kernels command): every pass of
  // every launch came from gpuscope's own flushed replay.
  const bool flushed =
      db.has_table("meta") && db.query_text("SELECT value FROM meta WHERE key = 'cache_control'").value_or("") == "all";
  std::map<std::int64_t, std::size_t> by_id;
  Statement st = db.prepare(
      "SELECT p.id, p.pid, p.device_id, COALESCE(p.launch_index, -1), COALESCE(p.correlation_id, 0), "
      "COALESCE(n.value, ''), COALESCE(s.value, ''), COALESCE(p.metric_set, ''), "
      "COALESCE(p.grid_x, 0), COALESCE(p.grid_y, 0), COALESCE(p.grid_z, 0), "
      "COALESCE(p.block_x, 0), COALESCE(p.block_y, 0), COALESCE(p.block_z, 0), "
      "COALESCE(p.registers_per_thread, -1), COALESCE(p.static_shared_memory + COALESCE(p.dynamic_shared_memory, 0), "
      "-1), "
      "COALESCE(p.passes, 0) "
      "FROM kernel_profiles p LEFT JOIN strings n ON n.id = p.name_id LEFT JOIN strings s ON s.id = p.short_name_id "
      "ORDER BY 4, p.pid, p.id");
  while (st.step()) {
    KernelLaunch l;
    l.profile_id = st.column_int(0);
    l.pid = st.column_int(1);
    l.device_id = st.column_int(2);
    l.launch_index = st.column_int(3);
    l.correlation_id = st.column_int(4);
    l.name = st.column_text(5);
    l.short_name = st.column_text(6);
    l.metric_set = st.column_text(7);
    for (int i = 0; i < 3; ++i) {
      l.grid[i] = st.column_int(8 + i);
      l.block[i] = st.column_int(11 + i);
    }
    if (filter && !std::regex_search(l.name, *filter) && !std::regex_search(l.short_name, *filter)) continue;
    l.launch.grid_blocks = occupancy::dims_product(l.grid[0], l.grid[1], l.grid[2]);
    l.launch.block_threads = occupancy::dims_product(l.block[0], l.block[1], l.block[2]);
    l.launch.registers_per_thread = st.column_int(14);
    l.launch.shared_memory_per_block = st.column_int(15);
    l.launch.passes = st.column_int(16);
    l.launch.passes_flushed = flushed;
    by_id[l.profile_id] = a.launches.size();
    a.launches.push_back(std::move(l));
  }

  std::set<std::string> collected;
  Statement mt = db.prepare(
      "SELECT m.profile_id, s.value, m.value FROM kernel_metrics m JOIN strings s ON s.id = m.metric_id "
      "WHERE m.value IS NOT NULL");
  while (mt.step()) {
    const auto it = by_id.find(mt.column_int(0));
    if (it == by_id.end()) continue;
    std::string metric = mt.column_text(1);
    a.launches[it->second].values[metric] = mt.column_double(2);
    collected.insert(std::move(metric));
  }
  a.metrics = ordered_metrics(collected);

  if (!a.launches.empty()) {
    a.ceiling_source = o.profile ? "measured" : "theoretical";
    if (!o.profile)
      a.warnings.push_back(
          "no machine profile: % of Ceiling uses theoretical peaks (device units x SM clock, memory bus x memory "
          "clock), which real kernels rarely reach, and no L2 ceiling; run `gpuscope peak` once to measure this "
          "GPU's ceilings");
  }
  const MachineProfile empty;
  if (o.profile) {
    a.ceilings = *o.profile;
  } else if (!a.launches.empty()) {
    const auto dev = devices.find({a.launches.front().pid, a.launches.front().device_id});
    if (dev != devices.end()) a.ceilings = dev->second.ceilings;
  }
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < a.launches.size(); ++i) {
    KernelLaunch& l = a.launches[i];
    const auto dev = devices.find({l.pid, l.device_id});
    if (dev != devices.end()) l.device = dev->second.device;
    const MachineProfile& ceilings = o.profile ? *o.profile : dev != devices.end() ? dev->second.ceilings : empty;
    l.derived = kernels::derive(l.values, l.launch, l.device, ceilings, a.ceiling_source, o.calibration);
    groups[l.display_name()].push_back(i);
  }

  for (const auto& [name, idx] : groups) {
    KernelName k;
    k.name = name;
    k.launches = static_cast<std::int64_t>(idx.size());
    std::vector<kernels::MetricValues> values;
    std::map<std::string, std::pair<kernels::Bound, double>> bound_time;  // label → (bound, seconds)
    bool any_dram = false, any_flops = false;
    double dram = 0, flops = 0;
    for (std::size_t i : idx) {
      const KernelLaunch& l = a.launches[i];
      values.push_back(l.values);
      const double t = std::isfinite(l.derived.duration_s) ? l.derived.duration_s : 0.0;
      k.total_duration_s += t;
      auto& bt = bound_time[l.derived.bound_label];
      bt.first = l.derived.bound;
      bt.second += t;
      if (std::isfinite(l.derived.dram_bytes)) any_dram = true, dram += l.derived.dram_bytes;
      if (std::isfinite(l.derived.flops)) any_flops = true, flops += l.derived.flops;
    }
    if (any_dram) k.dram_bytes = dram;
    if (any_flops) k.flops = flops;
    double best = -1;
    for (const auto& [label, bt] : bound_time) {
      if (bt.second > best) {
        best = bt.second;
        k.dominant_label = label;
        k.dominant_bound = bt.first;
      }
    }
    k.dominant_share_pct = k.total_duration_s > 0 ? best / k.total_duration_s * 100.0 : kUnknown;
    k.mean = kernels::mean_launch(values);
    const KernelLaunch& first = a.launches[idx.front()];
    const auto dev = devices.find({first.pid, first.device_id});
    const MachineProfile& ceilings = o.profile ? *o.profile : dev != devices.end() ? dev->second.ceilings : empty;
    k.launch = first.launch;
    k.device = first.device;
    k.derived = kernels::derive(k.mean, k.launch, k.device, ceilings, a.ceiling_source, o.calibration);
    a.names.push_back(std::move(k));
  }
  std::stable_sort(a.names.begin(), a.names.end(),
                   [](const KernelName& x, const KernelName& y) { return x.total_duration_s > y.total_duration_s; });
  // Each launch's and name's share of the profiled GPU time: the program-level gain of the
  // estimated speedup (core/kernel_derive.hpp).
  double total_s = 0;
  for (const KernelLaunch& l : a.launches)
    if (std::isfinite(l.derived.duration_s)) total_s += l.derived.duration_s;
  if (total_s > 0) {
    for (KernelLaunch& l : a.launches) kernels::set_time_share(l.derived, l.derived.duration_s / total_s * 100.0);
    for (KernelName& k : a.names) kernels::set_time_share(k.derived, k.total_duration_s / total_s * 100.0);
  }
  return a;
}

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
