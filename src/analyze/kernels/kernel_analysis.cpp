#include "analyze/kernels/kernel_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/bench_derive.hpp"
#include "core/kernel_metric_sets.hpp"
#include "core/occupancy.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

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

// The launches whose name or short name matches `filter` (every launch without one), by
// launch index, then pid; `by_id` maps each one's profile id to its place.
std::vector<KernelLaunch> read_launches(Database& db, const std::optional<std::regex>& filter,
                                        std::map<std::int64_t, std::size_t>& by_id) {
  // gpuscope kernels --cache-control all (meta, written by the kernels command): every pass of
  // every launch came from gpuscope's own flushed replay.
  const bool flushed =
      db.has_table("meta") && db.query_text("SELECT value FROM meta WHERE key = 'cache_control'").value_or("") == "all";
  std::vector<KernelLaunch> out;
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
    by_id[l.profile_id] = out.size();
    out.push_back(std::move(l));
  }
  return out;
}

// Each launch's metric values (kernel_metrics); the metrics collected, in ordered_metrics' order.
std::vector<std::string> read_metric_values(Database& db, const std::map<std::int64_t, std::size_t>& by_id,
                                            std::vector<KernelLaunch>& launches) {
  std::set<std::string> collected;
  Statement mt = db.prepare(
      "SELECT m.profile_id, s.value, m.value FROM kernel_metrics m JOIN strings s ON s.id = m.metric_id "
      "WHERE m.value IS NOT NULL");
  while (mt.step()) {
    const auto it = by_id.find(mt.column_int(0));
    if (it == by_id.end()) continue;
    std::string metric = mt.column_text(1);
    launches[it->second].values[metric] = mt.column_double(2);
    collected.insert(std::move(metric));
  }
  return ordered_metrics(collected);
}

// The launches `idx` of one name: summed, their dominant bound, and derive() of their mean.
KernelName name_summary(const std::string& name, const std::vector<std::size_t>& idx, const KernelAnalysis& a,
                        const MachineProfile& ceilings, const KernelReportOptions& o) {
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
  k.launch = first.launch;
  k.device = first.device;
  k.derived = kernels::derive(k.mean, k.launch, k.device, ceilings, a.ceiling_source, o.calibration);
  return k;
}

// Each launch's and name's share of the profiled GPU time: the program-level gain of the
// estimated speedup (core/kernel_derive.hpp).
void set_time_shares(KernelAnalysis& a) {
  double total_s = 0;
  for (const KernelLaunch& l : a.launches)
    if (std::isfinite(l.derived.duration_s)) total_s += l.derived.duration_s;
  if (total_s > 0) {
    for (KernelLaunch& l : a.launches) kernels::set_time_share(l.derived, l.derived.duration_s / total_s * 100.0);
    for (KernelName& k : a.names) kernels::set_time_share(k.derived, k.total_duration_s / total_s * 100.0);
  }
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
  std::map<std::int64_t, std::size_t> by_id;
  a.launches = read_launches(db, filter, by_id);
  a.metrics = read_metric_values(db, by_id, a.launches);

  if (!a.launches.empty()) {
    a.ceiling_source = o.profile ? "measured" : "theoretical";
    if (!o.profile)
      a.warnings.push_back(
          "no machine profile: % of Ceiling uses theoretical peaks (device units x SM clock, memory bus x memory "
          "clock), which real kernels rarely reach, and no L2 ceiling; run `gpuscope peak` once to measure this "
          "GPU's ceilings");
  }
  // The ceilings of a launch: the profile given, else its device's theoretical ones.
  const MachineProfile empty;
  const auto ceilings_of = [&](const KernelLaunch& l) -> const MachineProfile& {
    if (o.profile) return *o.profile;
    const auto dev = devices.find({l.pid, l.device_id});
    return dev != devices.end() ? dev->second.ceilings : empty;
  };
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
    l.derived = kernels::derive(l.values, l.launch, l.device, ceilings_of(l), a.ceiling_source, o.calibration);
    groups[l.display_name()].push_back(i);
  }
  for (const auto& [name, idx] : groups)
    a.names.push_back(name_summary(name, idx, a, ceilings_of(a.launches[idx.front()]), o));
  std::stable_sort(a.names.begin(), a.names.end(),
                   [](const KernelName& x, const KernelName& y) { return x.total_duration_s > y.total_duration_s; });
  set_time_shares(a);
  return a;
}

std::vector<kernels::KernelPoint> roofline_points(const KernelAnalysis& a, bool per_launch) {
  std::vector<kernels::KernelPoint> out;
  if (per_launch) {
    for (const KernelLaunch& l : a.launches)
      out.push_back(kernels::kernel_point(l.display_name() + " #" + std::to_string(l.launch_index), l.derived));
  } else {
    for (const KernelName& k : a.names) out.push_back(kernels::kernel_point(k.name, k.derived));
  }
  return out;
}

}  // namespace gpuscope::analyze
