#include "analyze/metrics/gpu_metrics_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "analyze/common/report_text.hpp"
#include "analyze/metrics/gpu_metrics_data.hpp"
#include "analyze/metrics/gpu_metrics_kernels.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::KernelMetricSums;
using detail::KernelNameSums;
using store::Database;
using store::Statement;

constexpr double kNsPerS = 1e9;

// The percent columns: metric and column name.
constexpr std::pair<std::string_view, std::string_view> kPercentColumns[] = {{detail::kSmActive, "SM Active"},
                                                                             {detail::kWarpsActive, "Warps Active"},
                                                                             {detail::kTensorActive, "Tensor Active"},
                                                                             {detail::kFmaPipe, "FMA Pipe"},
                                                                             {detail::kFp64Pipe, "FP64 Pipe"}};

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
std::string gpu_line(const DeviceWide& wide, const detail::SampledGpu& g, const detail::DramCeiling& ceiling,
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

void add_columns(Report& r, const detail::SampledMetrics& m) {
  r.add_column("Instances", "", ColumnType::kInteger)
      .add_column("Total Time", "ns", ColumnType::kInteger)
      .add_column("Sampled", "%", ColumnType::kReal);
  for (const auto& [metric, column] : kPercentColumns)
    if (m.has(metric)) r.add_column(std::string(column), "%", ColumnType::kReal);
  const bool read = m.has(detail::kDramRead), write = m.has(detail::kDramWrite);
  if (read) r.add_column("DRAM Read", "GB/s", ColumnType::kReal);
  if (write) r.add_column("DRAM Write", "GB/s", ColumnType::kReal);
  if (read && write)
    r.add_column("DRAM", "GB/s", ColumnType::kReal).add_column("DRAM of Ceiling", "%", ColumnType::kReal);
  if (read || write) r.add_column("DRAM Bytes", "bytes", ColumnType::kInteger);
  if (m.has(detail::kL2Bytes)) r.add_column("L2", "GB/s", ColumnType::kReal);
  r.add_column("Concurrent", "%", ColumnType::kReal).add_column("Name", "", ColumnType::kText);
}

// The keys of the names with kernels, most kernel time first (then by name).
std::vector<std::size_t> row_order(const KernelMetricSums& k) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < k.names.size(); ++i)
    if (k.sums[i].instances > 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (k.sums[a].kernel_ns != k.sums[b].kernel_ns) return k.sums[a].kernel_ns > k.sums[b].kernel_ns;
    return k.names[a] < k.names[b];
  });
  return order;
}

Row name_row(const detail::SampledMetrics& m, const KernelNameSums& s, const std::string& name) {
  const bool read = m.has(detail::kDramRead), write = m.has(detail::kDramWrite);
  Row row{s.instances, s.kernel_ns, detail::percent_cell(s.sampled_ns, s.kernel_ns)};
  for (const auto& [metric, column] : kPercentColumns)
    if (m.has(metric)) row.push_back(real_cell(s.metric(metric).mean()));
  const MetricOverlap rd = s.metric(detail::kDramRead), wr = s.metric(detail::kDramWrite);
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
  if (m.has(detail::kL2Bytes)) row.push_back(real_cell(s.metric(detail::kL2Bytes).rate()));
  row.push_back(detail::percent_cell(s.concurrent_ns, s.kernel_ns));
  row.push_back(name);
  return row;
}

// Which GPUs' DRAM ceilings DRAM of Ceiling (%) is of, and which have none.
void add_ceiling_notes(Report& r, const std::map<std::int64_t, detail::DramCeiling>& ceilings) {
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

// What the numbers mean, after the per-GPU lines (rows: the keys with rows, in order).
void add_meaning_notes(Report& r, const detail::SampledMetrics& m, const KernelMetricSums& k,
                       const std::vector<std::size_t>& rows, std::int64_t interval_ns) {
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
    for (std::size_t i : rows)
      if (static_cast<double>(k.sums[i].kernel_ns) / static_cast<double>(k.sums[i].instances) <
          static_cast<double>(interval_ns))
        ++shorter;
    short_text += "; " + std::to_string(shorter) + " of " + std::to_string(rows.size()) +
                  " kernel names run shorter than one sample (" + units::duration_ns(interval_ns) +
                  ") on average, so their values describe their surroundings more than themselves";
  }
  r.add_note(NoteLevel::kInfo, std::move(short_text));
  const bool partly_sampled =
      std::any_of(rows.begin(), rows.end(), [&](std::size_t i) { return k.sums[i].sampled_ns < k.sums[i].kernel_ns; });
  if (partly_sampled) {
    r.add_note(NoteLevel::kInfo,
               "Sampled (%) below 100: part of the kernels' time fell between samples or outside the sampling; the "
               "values there are unknown (not 0): the averages are of the sampled part, and DRAM Bytes carries the "
               "sampled rate over the whole kernel time");
  }
  if (m.has(detail::kDramRead) && m.has(detail::kDramWrite)) add_ceiling_notes(r, k.ceilings);
}

}  // namespace

Report gpu_metrics_sum(Database& db, const ReportOptions& options) {
  Report r;
  r.name = "gpu_metrics_sum";
  r.title = "GPU Metrics per Kernel (sampled hardware counters)";
  const bool any = detail::has_gpu_metrics(db);
  const detail::GpuIndexMap gpus = any ? detail::GpuIndexMap::load(db) : detail::GpuIndexMap{};
  const detail::SampledMetrics m = any ? detail::sampled_metrics(db, gpus) : detail::SampledMetrics{};
  add_columns(r, m);
  if (m.empty()) {
    r.add_note(NoteLevel::kInfo,
               "no GPU metrics in the capture range: trace with gpuscope trace --gpu-metrics to sample the GPU's "
               "hardware counters (SM, tensor-core and DRAM activity, about every 100 µs)");
    return r;
  }

  const KernelMetricSums k = detail::kernel_metric_sums(db, gpus, m, options);
  const std::vector<std::size_t> rows = row_order(k);
  for (std::size_t i : rows) r.rows.push_back(name_row(m, k.sums[i], k.names[i]));

  // Notes: one line per GPU, then what the numbers mean.
  const stats::Interval wall = detail::wall_span(db);
  const DeviceWide wide = device_wide(db, m, wall);
  std::int64_t interval_ns = 0;  // the shortest sampling interval
  for (const detail::SampledGpu& g : m.gpus) {
    r.add_note(NoteLevel::kInfo, gpu_line(wide, g, k.ceilings.at(g.gpu), wall));
    if (g.interval_ns > 0 && (interval_ns == 0 || g.interval_ns < interval_ns)) interval_ns = g.interval_ns;
  }
  if (rows.empty()) {
    r.add_note(NoteLevel::kInfo, "no CUDA kernels in the capture range");
  } else {
    add_meaning_notes(r, m, k, rows, interval_ns);
  }
  add_overflow_notes(db, r);
  return r;
}

}  // namespace gpuscope::analyze
