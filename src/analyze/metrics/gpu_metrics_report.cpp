#include "analyze/metrics/gpu_metrics_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/common/event_budget.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "analyze/metrics/gpu_metrics_data.hpp"
#include "analyze/common/trace_sql.hpp"
#include "analyze/common/report_text.hpp"
#include "core/metric_attribution.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"
#include "store/database.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

// Held per kernel while a GPU's samples stream by: its interval (24 bytes) in the list, the
// attribution's copy (24), its start and end events (48) and integrals (40), rounded up.
constexpr std::int64_t kBytesPerKernel = 160;
constexpr double kNsPerS = 1e9;

// The metrics attributed to kernels, in column order; the first sampled one gives Sampled (%).
constexpr std::string_view kAttributed[] = {detail::kSmActive,  detail::kWarpsActive, detail::kTensorActive,
                                            detail::kFmaPipe,   detail::kFp64Pipe,    detail::kDramRead,
                                            detail::kDramWrite, detail::kL2Bytes};

// The percent columns: metric and column name.
constexpr std::pair<std::string_view, std::string_view> kPercentColumns[] = {{detail::kSmActive, "SM Active"},
                                                                             {detail::kWarpsActive, "Warps Active"},
                                                                             {detail::kTensorActive, "Tensor Active"},
                                                                             {detail::kFmaPipe, "FMA Pipe"},
                                                                             {detail::kFp64Pipe, "FP64 Pipe"}};

// One kernel name's sums over its kernels on every GPU.
struct KeySums {
  std::int64_t instances = 0, kernel_ns = 0, concurrent_ns = 0, sampled_ns = 0;
  std::map<std::string_view, MetricOverlap> metrics;
  double ceiling_share_ns = 0, ceiling_weight_ns = 0;  // Σ (DRAM rate / ceiling) × ns, Σ ns
  bool ceiling_missing = false;                        // a GPU with DRAM samples had no ceiling
};

void add(MetricOverlap& sum, const MetricOverlap& o) {
  sum.covered_ns = core::sat_add(sum.covered_ns, o.covered_ns);
  sum.weight_ns += o.weight_ns;
  sum.value_ns += o.value_ns;
  sum.bytes += o.bytes;
}

bool has_metric(const detail::SampledGpu& g, const detail::SampledMetrics& m, std::string_view name) {
  const detail::SampledMetric* metric = m.find(name);
  return metric != nullptr && std::find(g.metric_ids.begin(), g.metric_ids.end(), metric->id) != g.metric_ids.end();
}

// A GPU's DRAM copy ceiling, B/s, from `gpuscope peak`'s cached profile of its UUID.
struct Ceiling {
  std::string uuid;
  double bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  std::string problem;  // a broken cached profile
};

Ceiling dram_ceiling(Database& db, const detail::SampledGpu& g) {
  Ceiling c;
  c.uuid = g.uuid;
  if (c.uuid.empty()) {  // the session did not say: a traced process's device row may
    Statement st = db.prepare(
        "SELECT uuid FROM devices WHERE device_id = ? AND uuid IS NOT NULL AND uuid <> '' ORDER BY pid LIMIT 1");
    st.bind(1, g.device_id);
    if (st.step()) c.uuid = st.column_text(0);
  }
  if (c.uuid.empty()) return c;
  try {
    if (const std::optional<MachineProfile> p = store::load_cached_profile(c.uuid)) {
      if (const core::Ceiling* dram = p->find("dram_copy"); dram != nullptr && dram->measured > 0)
        c.bytes_per_s = dram->measured;
    }
  } catch (const std::exception& e) {  // store::ProfileError: a broken file, or no cache folder
    c.problem = e.what();
  }
  return c;
}

Cell real_cell(double v) { return detail::real_or_null(v); }

// The device-wide overlap of the header line's metrics with the wall span, per GPU index.
using DeviceWide = std::map<std::string_view, std::map<std::int64_t, MetricOverlap>>;

DeviceWide device_wide(Database& db, const detail::SampledMetrics& m, const stats::Interval& wall) {
  DeviceWide out;
  const detail::SampledActivity& a = detail::sampled_activity(db);  // shared with top and gpu_util
  out[detail::kSmActive] = a.sm_active;
  out[detail::kTensorActive] = a.tensor_active;
  for (std::string_view name : {detail::kDramRead, detail::kDramWrite, detail::kSmClock})
    out[name] = detail::overlap_per_gpu(db, m, name, wall.start_ns, wall.end_ns);
  return out;
}

// "GPU 0 (NVIDIA H100 80GB HBM3, GH100): ..." — the per-GPU header line.
std::string gpu_line(const DeviceWide& wide, const detail::SampledGpu& g, const Ceiling& ceiling,
                     const stats::Interval& wall) {
  std::string text = "GPU " + std::to_string(g.gpu);
  std::string about = g.device_name;
  if (!g.chip.empty()) about += (about.empty() ? "" : ", ") + g.chip;
  if (!about.empty()) text += " (" + about + ")";
  text += ": " + std::to_string(g.samples) + (g.samples == 1 ? " sample" : " samples");
  if (g.interval_ns > 0) text += " every " + units::duration_ns(g.interval_ns);
  const auto over = [&](std::string_view name) -> std::optional<MetricOverlap> {
    const auto per_gpu = wide.find(name);
    if (per_gpu == wide.end()) return std::nullopt;
    const auto it = per_gpu->second.find(g.gpu);
    if (it == per_gpu->second.end() || it->second.weight_ns <= 0) return std::nullopt;
    return it->second;
  };
  const std::int64_t wall_ns = core::sat_sub(wall.end_ns, wall.start_ns);
  std::vector<std::string> parts;
  std::optional<MetricOverlap> covered;
  if (const auto sm = over(detail::kSmActive)) {
    parts.push_back("SM active " + units::percent(sm->mean()));
    covered = sm;
  }
  if (const auto t = over(detail::kTensorActive)) parts.push_back("tensor active " + units::percent(t->mean()));
  const auto read = over(detail::kDramRead), write = over(detail::kDramWrite);
  if (read || write) {
    const double bytes_per_ns = (read ? read->rate() : 0.0) + (write ? write->rate() : 0.0);
    std::string dram = std::string(read && write ? "DRAM"
                                   : read        ? "DRAM read"
                                                 : "DRAM write") +
                       " " + units::byte_rate(bytes_per_ns * kNsPerS);
    if (read && write && std::isfinite(ceiling.bytes_per_s)) {
      dram += " (" + units::percent_of(bytes_per_ns * kNsPerS / ceiling.bytes_per_s) + " of the measured " +
              units::byte_rate(ceiling.bytes_per_s) + ")";
    }
    parts.push_back(std::move(dram));
  }
  if (const auto clock = over(detail::kSmClock))
    parts.push_back("SM clock " + units::real3(clock->mean() / 1e6) + " MHz");
  if (parts.empty()) return text + "; no sample inside the wall time";
  text += "; over the wall time";
  if (covered && wall_ns > 0) text += " (" + units::percent_of(covered->covered_share(wall_ns)) + " of it sampled)";
  text += ":";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? " " : ", ") + parts[i];
  return text;
}

void add_overflow_notes(Database& db, Report& r) {
  Statement st = db.prepare(
      "SELECT COALESCE(count, 0), COALESCE(detail, '') FROM data_loss WHERE what = 'gpu_metrics_overflow' ORDER BY "
      "pid");
  while (st.step()) {
    std::string text = "gpu_metrics_overflow (count " + std::to_string(st.column_int(0)) + ")";
    if (!st.column_text(1).empty()) text += ": " + st.column_text(1);
    r.add_note(NoteLevel::kDataLoss, std::move(text));
  }
}

}  // namespace

Report gpu_metrics_sum(Database& db, const ReportOptions& options) {
  Report r;
  r.name = "gpu_metrics_sum";
  r.title = "GPU Metrics per Kernel (sampled hardware counters)";
  const bool any = detail::has_gpu_metrics(db);
  const detail::GpuIndexMap gpus = any ? detail::GpuIndexMap::load(db) : detail::GpuIndexMap{};
  const detail::SampledMetrics m = any ? detail::sampled_metrics(db, gpus) : detail::SampledMetrics{};
  const auto sampled = [&m](std::string_view name) { return m.has(name); };

  r.add_column("Instances", "", ColumnType::kInteger)
      .add_column("Total Time", "ns", ColumnType::kInteger)
      .add_column("Sampled", "%", ColumnType::kReal);
  for (const auto& [metric, column] : kPercentColumns)
    if (sampled(metric)) r.add_column(std::string(column), "%", ColumnType::kReal);
  const bool read = sampled(detail::kDramRead), write = sampled(detail::kDramWrite);
  if (read) r.add_column("DRAM Read", "GB/s", ColumnType::kReal);
  if (write) r.add_column("DRAM Write", "GB/s", ColumnType::kReal);
  if (read && write)
    r.add_column("DRAM", "GB/s", ColumnType::kReal).add_column("DRAM of Ceiling", "%", ColumnType::kReal);
  if (read || write) r.add_column("DRAM Bytes", "bytes", ColumnType::kInteger);
  if (sampled(detail::kL2Bytes)) r.add_column("L2", "GB/s", ColumnType::kReal);
  r.add_column("Concurrent", "%", ColumnType::kReal).add_column("Name", "", ColumnType::kText);

  if (m.empty()) {
    r.add_note(NoteLevel::kInfo,
               "no GPU metrics in the capture range: trace with gpuscope trace --gpu-metrics to sample the GPU's "
               "hardware counters (SM, tensor-core and DRAM activity, about every 100 µs)");
    return r;
  }

  check_event_budget(
      {"gpu_metrics_sum", "kernels", db.query_int("SELECT COUNT(*) FROM kernels").value_or(0), kBytesPerKernel, ""});
  // Every kernel, by GPU, keyed by its name's index.
  std::vector<std::string> names;
  std::map<std::int64_t, std::vector<KernelInterval>> per_gpu;
  {
    std::map<std::string, std::size_t> key_of;
    Statement st =
        db.prepare("SELECT pid, device_id, start_ns, end_ns, " + detail::kernel_name_sql(options) + " FROM v_kernels");
    while (st.step()) {
      const auto [it, added] = key_of.emplace(st.column_text(4), names.size());
      if (added) names.push_back(it->first);
      per_gpu[gpus.index(st.column_int(0), st.column_int(1))].push_back(
          {st.column_int(2), st.is_null(3) ? st.column_int(2) : st.column_int(3), it->second});
    }
  }

  std::map<std::int64_t, Ceiling> ceilings;  // by GPU index, for sampled GPUs
  for (const detail::SampledGpu& g : m.gpus) ceilings.emplace(g.gpu, dram_ceiling(db, g));

  std::vector<KeySums> sums(names.size());
  for (const auto& [gpu, kernels] : per_gpu) {
    const auto g_it =
        std::find_if(m.gpus.begin(), m.gpus.end(), [gpu = gpu](const detail::SampledGpu& g) { return g.gpu == gpu; });
    std::map<std::string_view, std::vector<KernelMetricShare>> shares;
    std::string_view coverage;  // the metric Sampled (%) is of
    if (g_it != m.gpus.end()) {
      for (std::string_view name : kAttributed) {
        if (!has_metric(*g_it, m, name)) continue;
        MetricAttribution a(kernels, names.size());
        detail::each_sample(db, g_it->device_id, m.find(name)->id, [&a](const MetricSample& s) { a.add(s); });
        shares[name] = a.finish();
        if (coverage.empty()) coverage = name;
      }
    }
    // Instances, time and concurrency are the same in every metric's shares.
    const std::vector<KernelMetricShare> base =
        coverage.empty() ? MetricAttribution(kernels, names.size()).finish() : shares.at(coverage);
    const double ceiling_per_ns =
        g_it == m.gpus.end() ? std::numeric_limits<double>::quiet_NaN() : ceilings.at(gpu).bytes_per_s / kNsPerS;
    for (std::size_t k = 0; k < names.size(); ++k) {
      KeySums& s = sums[k];
      s.instances += base[k].instances;
      s.kernel_ns = core::sat_add(s.kernel_ns, base[k].kernel_ns);
      s.concurrent_ns = core::sat_add(s.concurrent_ns, base[k].concurrent_ns);
      if (!coverage.empty()) s.sampled_ns = core::sat_add(s.sampled_ns, shares.at(coverage)[k].metric.covered_ns);
      for (const auto& [name, per_key] : shares) add(s.metrics[name], per_key[k].metric);
      // This GPU's DRAM rate against its own ceiling, weighted by the time it covers.
      const auto r_it = shares.find(detail::kDramRead), w_it = shares.find(detail::kDramWrite);
      if (r_it == shares.end() || w_it == shares.end()) continue;
      const MetricOverlap& rd = r_it->second[k].metric;
      const MetricOverlap& wr = w_it->second[k].metric;
      if (rd.weight_ns <= 0 || wr.weight_ns <= 0) continue;
      if (!std::isfinite(ceiling_per_ns) || ceiling_per_ns <= 0) {
        s.ceiling_missing = true;
        continue;
      }
      s.ceiling_share_ns += (rd.rate() + wr.rate()) / ceiling_per_ns * rd.weight_ns;
      s.ceiling_weight_ns += rd.weight_ns;
    }
  }

  // Rows, most kernel time first.
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < names.size(); ++k)
    if (sums[k].instances > 0) order.push_back(k);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (sums[a].kernel_ns != sums[b].kernel_ns) return sums[a].kernel_ns > sums[b].kernel_ns;
    return names[a] < names[b];
  });
  const auto metric = [](const KeySums& s, std::string_view name) {
    const auto it = s.metrics.find(name);
    return it == s.metrics.end() ? MetricOverlap{} : it->second;
  };
  bool partly_sampled = false;
  for (std::size_t k : order) {
    const KeySums& s = sums[k];
    partly_sampled |= s.sampled_ns < s.kernel_ns;
    Row row{s.instances, s.kernel_ns, detail::percent_cell(s.sampled_ns, s.kernel_ns)};
    for (const auto& [name, column] : kPercentColumns)
      if (sampled(name)) row.push_back(real_cell(metric(s, name).mean()));
    const MetricOverlap rd = metric(s, detail::kDramRead), wr = metric(s, detail::kDramWrite);
    if (read) row.push_back(real_cell(rd.rate()));
    if (write) row.push_back(real_cell(wr.rate()));
    if (read && write) {
      row.push_back(real_cell(rd.rate() + wr.rate()));
      row.push_back(s.ceiling_missing || s.ceiling_weight_ns <= 0
                        ? Cell{std::monostate{}}
                        : Cell{s.ceiling_share_ns / s.ceiling_weight_ns * 100.0});
    }
    if (read || write) {
      // The sampled rate over the kernels' whole time: the bytes of an execution, also when
      // samples are missing for part of it (Sampled below 100 %).
      const double rate = (read ? rd.rate() : 0.0) + (write ? wr.rate() : 0.0);
      const double bytes = rate * static_cast<double>(s.kernel_ns) / static_cast<double>(s.instances);
      row.push_back(std::isfinite(bytes) ? Cell{std::llround(bytes)} : Cell{std::monostate{}});
    }
    if (sampled(detail::kL2Bytes)) row.push_back(real_cell(metric(s, detail::kL2Bytes).rate()));
    row.push_back(detail::percent_cell(s.concurrent_ns, s.kernel_ns));
    row.push_back(names[k]);
    r.rows.push_back(std::move(row));
  }

  // Notes: one line per GPU, then what the numbers mean.
  const stats::Interval wall = detail::wall_span(db);
  const DeviceWide wide = device_wide(db, m, wall);
  std::int64_t interval_ns = 0;  // the shortest sampling interval
  for (const detail::SampledGpu& g : m.gpus) {
    r.add_note(NoteLevel::kInfo, gpu_line(wide, g, ceilings.at(g.gpu), wall));
    if (g.interval_ns > 0 && (interval_ns == 0 || g.interval_ns < interval_ns)) interval_ns = g.interval_ns;
  }
  if (order.empty()) {
    r.add_note(NoteLevel::kInfo, "no CUDA kernels in the capture range");
  } else {
    r.add_note(NoteLevel::kInfo,
               "the samples are device-wide: the GPU's counters count everything running on it, so kernels that "
               "overlap (Concurrent (%) above 0) each get the whole sample — their rows show the same activity and "
               "their DRAM bytes add up to more than the GPU moved");
    r.add_note(NoteLevel::kInfo,
               "SM Active (%) is not occupancy: it is the share of cycles an SM had at least one warp, averaged over "
               "the SMs (a kernel that fills every SM with one warp each reads 100 %); Warps Active (%) is the "
               "achieved occupancy (warps resident over the SM's maximum)");
    std::string short_text =
        "a kernel shorter than a sample gets the sample's mix: the average over the whole sample, of whatever ran "
        "in it, idle time included";
    if (interval_ns > 0) {
      std::int64_t shorter = 0;
      for (std::size_t k : order)
        if (static_cast<double>(sums[k].kernel_ns) / static_cast<double>(sums[k].instances) <
            static_cast<double>(interval_ns))
          ++shorter;
      short_text += "; " + std::to_string(shorter) + " of " + std::to_string(order.size()) +
                    " kernel names run shorter than one sample (" + units::duration_ns(interval_ns) +
                    ") on average, so their values describe their surroundings more than themselves";
    }
    r.add_note(NoteLevel::kInfo, std::move(short_text));
    if (partly_sampled) {
      r.add_note(NoteLevel::kInfo,
                 "Sampled (%) below 100: part of the kernels' time fell between samples or outside the sampling; the "
                 "values there are unknown (not 0): the averages are of the sampled part, and DRAM Bytes carries the "
                 "sampled rate over the whole kernel time");
    }
    if (read && write) {
      std::vector<std::string> measured, missing;
      for (const auto& [gpu, c] : ceilings) {
        if (std::isfinite(c.bytes_per_s)) {
          measured.push_back("GPU " + std::to_string(gpu) + " " + units::byte_rate(c.bytes_per_s));
        } else {
          missing.push_back("GPU " + std::to_string(gpu) + (c.uuid.empty() ? "" : " (" + c.uuid + ")"));
        }
        if (!c.problem.empty()) r.add_note(NoteLevel::kWarning, "machine profile: " + c.problem);
      }
      const auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
        return out;
      };
      if (!measured.empty()) {
        r.add_note(NoteLevel::kInfo,
                   "DRAM of Ceiling (%) is of the DRAM copy bandwidth (read + write bytes) gpuscope peak measured: " +
                       join(measured));
      }
      if (!missing.empty()) {
        r.add_note(NoteLevel::kInfo, "DRAM of Ceiling (%) is blank without a machine profile of " + join(missing) +
                                         ": run gpuscope peak on that GPU to measure its DRAM ceiling");
      }
    }
  }
  add_overflow_notes(db, r);
  return r;
}

}  // namespace gpuscope::analyze
